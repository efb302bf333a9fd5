package hsqldb

import (
	"maps"

	"github.com/tidemarkdb/tidemark/core/dialect"
)

// statements are ANSI's (dialect.ANSI) with what this engine needs instead:
// the partition seed typed with INT, and the lease expiry computed with
// TIMESTAMPADD. The counter is ANSI's UPDATE, then SELECT (see the package
// doc: in MVCC mode only the UPDATE waits for the holder).
func statements() map[dialect.StatementID]string {
	st := dialect.ANSI().Statements
	maps.Copy(st, dialect.LeaseStatements(now, `TIMESTAMPADD(MILLISECOND, #{lease_millis}, `+now+`)`))
	st[dialect.PartitionSeed] = `MERGE INTO ${partition_metadata_table} t USING (VALUES (1, CAST(#{partitions} AS INT))) AS s (id, partitions) ON t.id = s.id ` +
		`WHEN NOT MATCHED THEN INSERT (id, partitions) VALUES (s.id, s.partitions)`
	return st
}
