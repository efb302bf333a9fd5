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
	// H2 reads an index forwards only: ANSI's per-id MAX, or a top-1
	// ORDER BY sequence_no DESC, scans the id's range of the unique index.
	// Ordered by aggregate_id, sequence_no DESC, each read is the first
	// entry of idx_<table>_last (eventStoreLastIndex) under the id: one
	// row read per stream, whatever its length.
	st[dialect.StreamVersion] = dialect.StreamVersionTopRow(lastFirst)
	st[dialect.StreamVersions] = dialect.StreamVersionsTopRows(lastFirst)
	return st
}

// lastFirst orders a stream's events as idx_<table>_last holds them.
const lastFirst = "aggregate_id, sequence_no DESC"
