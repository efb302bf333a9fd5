package postgres

import "github.com/tidemarkdb/tidemark/core/dialect"

// captureInsert is ANSI's capture insert with the position drawn from the
// CACHE 1 sequence by the insert, after pg_current_xact_id() has assigned
// the transaction its id (CASE evaluates its condition first, as in the
// event insert), and returned.
func captureInsert() dialect.RowInsert {
	ins := dialect.ANSI().CaptureInsert
	ins.Row = `(#{id}, CASE WHEN pg_current_xact_id() IS NOT NULL THEN nextval('${event_capture_global_position_table}') END, ` +
		`#{partition_key}, #{event_type}, #{event_revision}, #{payload}, #{metadata}, #{occurred_at}, #{message_key})`
	ins.Tail = ` RETURNING global_position`
	return ins
}
