package h2

import (
	"maps"

	"github.com/tidemarkdb/tidemark/core/dialect"
)

// statements are ANSI's (dialect.ANSI) with what this engine needs instead.
func statements() map[dialect.StatementID]string {
	st := dialect.ANSI().Statements
	maps.Copy(st, dialect.LeaseStatements(now, `TIMESTAMPADD(MILLISECOND, #{lease_millis}, `+now+`)`))
	maps.Copy(st, dialect.PartitionLeaseStatements(now, `TIMESTAMPADD(MILLISECOND, #{lease_millis}, `+now+`)`))
	// The saga tables' TIMESTAMP columns hold UTC whatever the session's
	// time zone: a zoned value cast to TIMESTAMP takes the session's zone
	// (even AT TIME ZONE 'UTC'), UTC text cast to TIMESTAMP does not.
	const utc = `CAST(FORMATDATETIME(CURRENT_TIMESTAMP, 'yyyy-MM-dd HH:mm:ss.SSSSSS', 'en', 'UTC') AS TIMESTAMP)`
	maps.Copy(st, dialect.SagaStatements(utc, `TIMESTAMPADD(MILLISECOND, #{lease_millis}, `+utc+`)`))
	maps.Copy(st, map[dialect.StatementID]string{
		dialect.PartitionSeed: `MERGE INTO ${partition_metadata_table} t USING (VALUES (1, CAST(#{partitions} AS INT))) AS s (id, partitions) ON t.id = s.id ` +
			`WHEN NOT MATCHED THEN INSERT (id, partitions) VALUES (s.id, s.partitions)`,
		// The UPDATE locks the row until the transaction ends; FINAL TABLE
		// returns the value it wrote.
		dialect.PositionAllocate: `SELECT val FROM FINAL TABLE (UPDATE ${position_table} SET val = val + #{count} WHERE id = 1)`,
		dialect.DatabaseNow:      `SELECT ` + now,
	})
	// The counter's new value comes back from the UPDATE itself (FINAL TABLE).
	delete(st, dialect.PositionAllocated)
	st[dialect.RMTopicAllocate] = `SELECT val FROM FINAL TABLE (UPDATE ${read_model_capture_positions_table} SET val = val + #{count} WHERE topic = #{topic})`
	delete(st, dialect.RMTopicAllocated)
	// H2 cannot read the last index entry under an id: ANSI's per-id MAX
	// scans the id's range twice per branch (3.2 million rows read for 16
	// binds of one 100,000-event stream), a top-1 ORDER BY … DESC once
	// (1.6 million). The IN list reads each id's rows once.
	st[dialect.StreamVersions] = dialect.StreamVersionsGroupBy()
	return st
}
