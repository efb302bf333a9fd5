package dialect

// ansiUndeliveredStatements are the undelivered-message statements, the
// skip cleanup and the incomplete-history mark in ANSI SQL: plain INSERTs
// and guarded UPDATEs/DELETEs every engine of the suite runs as written.
func ansiUndeliveredStatements() map[StatementID]string {
	return map[StatementID]string{
		UndeliveredInsert: `INSERT INTO ${consumer_undelivered_messages_table} (id, consumer_id, source_name, resolved_key, key_hash, message_position, partition_no, ` +
			`status, failure_count, next_retry_at, failure_reason, recorded_at, unresolved, message_copy) VALUES (#{id}, #{consumer_id}, #{source_name}, ` +
			`#{resolved_key}, #{key_hash}, #{message_position}, #{partition_no}, #{status}, #{failure_count}, #{next_retry_at}, #{failure_reason}, ` +
			`#{recorded_at}, #{unresolved}, #{message_copy})`,
		UndeliveredRead: `SELECT id, source_name, partition_no, resolved_key, message_position, status, failure_count, next_retry_at, failure_reason, recorded_at ` +
			`FROM ${consumer_undelivered_messages_table} WHERE consumer_id = #{consumer_id}`,
		UndeliveredCopy:   `SELECT message_copy FROM ${consumer_undelivered_messages_table} WHERE id = #{id}`,
		UndeliveredDelete: `DELETE FROM ${consumer_undelivered_messages_table} WHERE id = #{id} AND status = #{from_status}`,
		UndeliveredUpdate: `UPDATE ${consumer_undelivered_messages_table} SET status = #{status}, failure_count = #{failure_count}, ` +
			`next_retry_at = #{next_retry_at}, failure_reason = #{failure_reason} ` +
			`WHERE id = #{id} AND status = #{from_status} AND failure_count = #{from_count}`,
		UndeliveredHoldKey: `UPDATE ${consumer_undelivered_messages_table} SET status = #{status} ` +
			`WHERE consumer_id = #{consumer_id} AND source_name = #{source_name} AND partition_no = #{partition_no} ` +
			`AND key_hash = #{key_hash} AND resolved_key = #{resolved_key} AND status = #{from_status}`,
		SkippedDeletePassed: `DELETE FROM ${consumer_skipped_messages_table} WHERE consumer_id = #{consumer_id} AND source_name = #{source_name} ` +
			`AND message_position <= #{through} AND NOT EXISTS (SELECT 1 FROM ${consumer_undelivered_messages_table} u ` +
			`WHERE u.consumer_id = #{consumer_id} AND u.source_name = #{source_name} ` +
			`AND u.message_position = ${consumer_skipped_messages_table}.message_position)`,
		CheckpointReadIncomplete: `SELECT source_name, partition_no, incomplete_through FROM ${consumer_checkpoints_table} WHERE consumer_id = #{consumer_id}`,
		CheckpointMarkIncomplete: `UPDATE ${consumer_checkpoints_table} SET incomplete_through = #{through} ` +
			`WHERE consumer_id = #{consumer_id} AND source_name = #{source_name} ` +
			`AND (incomplete_through IS NULL OR incomplete_through < #{through})`,
	}
}
