package dialect

// ansiConsumerAdminStatements are the operator statements in ANSI SQL;
// every engine of the suite runs them as written.
func ansiConsumerAdminStatements() map[StatementID]string {
	const undelivered = `${consumer_undelivered_messages_table}`
	return map[StatementID]string{
		AdminConsumerList:           `SELECT id, consumer_type, consumer_name, state, halt_reason, epoch, state_since FROM ${consumers_table} ORDER BY consumer_type, consumer_name`,
		AdminCheckpointIncomplete:   `SELECT source_name, partition_no, incomplete_through FROM ${consumer_checkpoints_table} WHERE consumer_id = #{consumer_id}`,
		AdminCheckpointCountSource:  `SELECT COUNT(*) AS n FROM ${consumer_checkpoints_table} WHERE consumer_id = #{consumer_id} AND source_name = #{source_name}`,
		AdminCheckpointDeleteSource: `DELETE FROM ${consumer_checkpoints_table} WHERE consumer_id = #{consumer_id} AND source_name = #{source_name}`,
		AdminConsumerDeleteUnreferenced: `DELETE FROM ${consumers_table} WHERE id = #{id} ` +
			`AND NOT EXISTS (SELECT 1 FROM ${consumer_checkpoints_table} WHERE consumer_id = #{id}) ` +
			`AND NOT EXISTS (SELECT 1 FROM ` + undelivered + ` WHERE consumer_id = #{id}) ` +
			`AND NOT EXISTS (SELECT 1 FROM ${consumer_skipped_messages_table} WHERE consumer_id = #{id})`,
		AdminUndeliveredCounts: `SELECT status, COUNT(*) AS n FROM ` + undelivered + ` WHERE consumer_id = #{consumer_id} GROUP BY status`,
		AdminUndeliveredList: `SELECT id, source_name, partition_no, resolved_key, message_position, status, failure_count, next_retry_at, failure_reason, recorded_at ` +
			`FROM ` + undelivered + ` WHERE consumer_id = #{consumer_id} ORDER BY source_name, partition_no, message_position`,
		AdminUndeliveredRelease:      `UPDATE ` + undelivered + ` SET status = #{status}, failure_count = 0, next_retry_at = NULL WHERE id = #{id} AND status = #{from_status}`,
		AdminUndeliveredDeleteOne:    `DELETE FROM ` + undelivered + ` WHERE id = #{id} AND status = #{from_status}`,
		AdminUndeliveredDeleteSource: `DELETE FROM ` + undelivered + ` WHERE consumer_id = #{consumer_id} AND source_name = #{source_name}`,
		AdminSkippedDeleteSource:     `DELETE FROM ${consumer_skipped_messages_table} WHERE consumer_id = #{consumer_id} AND source_name = #{source_name}`,
	}
}
