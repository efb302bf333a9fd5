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

// readModelInsert is ANSI's read-model insert with the position drawn from
// the datasource's shared CACHE 1 sequence the same way, and returned.
func readModelInsert() dialect.RowInsert {
	ins := dialect.ANSI().ReadModelInsert
	ins.Row = `(#{id}, #{topic}, CASE WHEN pg_current_xact_id() IS NOT NULL THEN nextval('${read_model_capture_positions_table}') END, ` +
		`#{partition_key}, #{read_model_key}, #{read_model_type}, #{payload}, #{metadata}, #{cascade_depth}, #{deleted}, #{occurred_at})`
	ins.Tail = ` RETURNING topic_position`
	return ins
}

// rmTopicStatements are the read-model topics' statements that differ from
// ANSI's: no per-topic counter (one sequence for every topic), and the
// startup floor. setval runs only when the sequence is behind the topic's
// highest stored position or the shared mark (a recreated sequence), so a
// sequence in use is never written; its end is read as the advancer reads
// it (sequenceEnd).
func rmTopicStatements(st map[dialect.StatementID]string) {
	for _, id := range []dialect.StatementID{dialect.RMTopicSeed, dialect.RMTopicAllocate, dialect.RMTopicAllocated, dialect.RMTopicEnd} {
		delete(st, id)
	}
	const seq = `${read_model_capture_positions_table}`
	st[dialect.RMTopicSequenceFloor] = `SELECT setval('` + seq + `', f.floor) FROM (SELECT GREATEST(` +
		`COALESCE((SELECT MAX(topic_position) FROM ${read_model_capture_records_table} WHERE topic = #{topic}), 0), ` +
		`COALESCE((SELECT high_water_mark FROM ${high_water_mark_store_table} WHERE topic_name = #{mark_topic}), 0)) AS floor) f ` +
		`WHERE f.floor > COALESCE(pg_sequence_last_value('` + seq + `'), 0)`
}
