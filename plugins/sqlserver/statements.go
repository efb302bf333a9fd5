package sqlserver

import (
	"maps"

	"github.com/tidemarkdb/tidemark/core/dialect"
)

// statements is ANSI's statement set with SQL Server's differences.
//
// Seeds insert a row only when a probe under UPDLOCK, HOLDLOCK finds none:
// the probe locks the key (range) it read until the statement ends, so two
// concurrent seeds cannot both insert, and an existing row is never
// overwritten.
//
// Paging uses ORDER BY … OFFSET 0 ROWS FETCH NEXT #{limit} ROWS ONLY; leases
// are computed on the database clock in UTC (SYSUTCDATETIME()). SQL Server
// reports the rows an UPDATE matched (unless SET NOCOUNT ON), so HWMAcquire
// counts a renewal as held.
//
// CommittedEnd is ANSI's plain read: see Catalogue for its behaviour with
// and without READ_COMMITTED_SNAPSHOT.
func statements() map[dialect.StatementID]string {
	st := dialect.ANSI().Statements
	maps.Copy(st, dialect.LeaseStatements(now, `DATEADD(millisecond, CAST(#{lease_millis} AS INT), `+now+`)`))
	maps.Copy(st, dialect.PartitionLeaseStatements(now, `DATEADD(millisecond, CAST(#{lease_millis} AS INT), `+now+`)`))
	// Deadlines may lie further ahead than an INT of milliseconds (24.8
	// days): whole seconds, then the rest.
	maps.Copy(st, dialect.SagaStatements(now, `DATEADD(millisecond, CAST(#{lease_millis} % 1000 AS INT), DATEADD(second, CAST(#{lease_millis} / 1000 AS INT), `+now+`))`))
	// No FOR UPDATE: the table hints hold the row's update lock to the end
	// of the transaction, which a takeover's UPDATE waits for.
	st[dialect.LeaseFence] = `SELECT instance_id, generation FROM ${partition_ownership_table} WITH (UPDLOCK, ROWLOCK) ` +
		`WHERE consumer_type = #{consumer_type} AND consumer_name = #{consumer_name} AND partition_no = #{partition_no}`
	// PositionAllocate returns the new value itself (OUTPUT).
	delete(st, dialect.PositionAllocated)
	maps.Copy(st, map[dialect.StatementID]string{
		dialect.PartitionSeed: `INSERT INTO ${partition_metadata_table} (id, partitions) SELECT 1, #{partitions} ` +
			`WHERE NOT EXISTS (SELECT 1 FROM ${partition_metadata_table} WITH (UPDLOCK, HOLDLOCK) WHERE id = 1)`,
		dialect.PositionSeed: `INSERT INTO ${position_table} (id, val) SELECT 1, 0 ` +
			`WHERE NOT EXISTS (SELECT 1 FROM ${position_table} WITH (UPDLOCK, HOLDLOCK) WHERE id = 1)`,
		dialect.PositionAllocate:    `UPDATE ${position_table} WITH (UPDLOCK, HOLDLOCK) SET val = val + #{count} OUTPUT inserted.val WHERE id = 1`,
		dialect.StreamVersion:       `SELECT TOP (1) sequence_no, aggregate_type FROM ${event_store_table} WHERE aggregate_id = #{aggregate_id} ORDER BY sequence_no DESC`,
		dialect.EventRange:          `SELECT ` + dialect.EventColumns + ` FROM ${event_store_table} WHERE global_position > #{after} AND global_position <= #{upto} ORDER BY global_position OFFSET 0 ROWS FETCH NEXT #{limit} ROWS ONLY`,
		dialect.EventPartitionRange: `SELECT ` + dialect.EventColumns + ` FROM ${event_store_table} WHERE partition_key = #{partition} AND global_position > #{after} AND global_position <= #{upto} ORDER BY global_position OFFSET 0 ROWS FETCH NEXT #{limit} ROWS ONLY`,
		dialect.SnapshotLatest:      `SELECT TOP (1) sequence_no, payload, created_at FROM ${aggregate_snapshots_table} WHERE aggregate_id = #{aggregate_id} AND aggregate_type = #{aggregate_type} AND snapshot_version = #{snapshot_version} ORDER BY sequence_no DESC`,
		dialect.HWMSeed: `INSERT INTO ${high_water_mark_store_table} (topic_name, high_water_mark, topic_start) SELECT #{topic}, 0, 0 ` +
			`WHERE NOT EXISTS (SELECT 1 FROM ${high_water_mark_store_table} WITH (UPDLOCK, HOLDLOCK) WHERE topic_name = #{topic})`,
		dialect.DatabaseNow: `SELECT ` + now,

		dialect.RMTopicSeed: `INSERT INTO ${read_model_capture_positions_table} (topic, val) SELECT #{topic}, 0 ` +
			`WHERE NOT EXISTS (SELECT 1 FROM ${read_model_capture_positions_table} WITH (UPDLOCK, HOLDLOCK) WHERE topic = #{topic})`,
		dialect.RMTopicAllocate: `UPDATE ${read_model_capture_positions_table} WITH (UPDLOCK, HOLDLOCK) SET val = val + #{count} OUTPUT inserted.val WHERE topic = #{topic}`,
		dialect.RMTopicLatest: `SELECT TOP (1) ` + dialect.ReadModelColumns + ` FROM ${read_model_capture_records_table} ` +
			`WHERE topic = #{topic} AND read_model_key = #{key} ORDER BY topic_position DESC`,
	})
	delete(st, dialect.RMTopicAllocated)
	topicStatements(st)
	return st
}
