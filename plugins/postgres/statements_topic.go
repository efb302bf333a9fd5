package postgres

import "github.com/tidemarkdb/tidemark/core/dialect"

// topicStatements puts PostgreSQL's capture-topic insert into st: the
// position is drawn from the CACHE 1 sequence by the insert, after
// pg_current_xact_id() has assigned the transaction its id (CASE evaluates
// its condition first, as in the event insert), and returned. The counter
// insert does not apply under SEQUENCE_XID_HORIZON.
func topicStatements(st map[dialect.StatementID]string) {
	delete(st, dialect.TopicInsert)
	st[dialect.TopicInsertDrawn] = `INSERT INTO ${event_capture_records_table} (` + dialect.TopicColumns + `) VALUES ` +
		`(#{id}, CASE WHEN pg_current_xact_id() IS NOT NULL THEN nextval('${event_capture_global_position_table}') END, ` +
		`#{partition_key}, #{event_type}, #{event_revision}, #{payload}, #{metadata}, #{occurred_at}, #{message_key}) RETURNING global_position`
}
