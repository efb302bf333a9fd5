package dialect

// ansiConsumerStatements are the consumer statements in ANSI SQL: plain
// INSERTs (a unique violation means the row exists, as for seeds) and
// guarded UPDATEs, so every engine of the suite runs them as written.
func ansiConsumerStatements() map[StatementID]string {
	const cols = `SELECT id, consumer_type, consumer_name, state, halt_reason, epoch, state_since FROM ${consumers_table} `
	return map[StatementID]string{
		ConsumerInsert: `INSERT INTO ${consumers_table} (id, consumer_type, consumer_name, state, halt_reason, epoch, declaration_fingerprint, state_since) ` +
			`VALUES (#{id}, #{consumer_type}, #{consumer_name}, NULL, NULL, NULL, NULL, #{state_since})`,
		ConsumerByName: cols + `WHERE consumer_type = #{consumer_type} AND consumer_name = #{consumer_name}`,
		ConsumerByID:   cols + `WHERE id = #{id}`,
		// The CAST types the bind for engines that cannot infer it inside
		// COALESCE's comparison (H2, HSQLDB).
		ConsumerSetState: `UPDATE ${consumers_table} SET state = #{state}, halt_reason = #{halt_reason}, state_since = #{state_since} ` +
			`WHERE id = #{id} AND COALESCE(state, 'RUNNING') = CAST(#{from_state} AS VARCHAR(16))`,
		ConsumerBeginRebuild: `UPDATE ${consumers_table} SET state = #{state}, halt_reason = NULL, epoch = COALESCE(epoch, 0) + 1, state_since = #{state_since} ` +
			`WHERE id = #{id} AND COALESCE(state, 'RUNNING') = CAST(#{from_state} AS VARCHAR(16))`,
		CheckpointInsert: `INSERT INTO ${consumer_checkpoints_table} (consumer_id, source_name, partition_no, position, incomplete_through, replay_through, epoch) ` +
			`VALUES (#{consumer_id}, #{source_name}, #{partition_no}, NULL, NULL, NULL, #{epoch})`,
		CheckpointRead:    `SELECT source_name, partition_no, position, epoch FROM ${consumer_checkpoints_table} WHERE consumer_id = #{consumer_id}`,
		CheckpointReadOne: `SELECT position, epoch FROM ${consumer_checkpoints_table} WHERE consumer_id = #{consumer_id} AND source_name = #{source_name} AND partition_no = #{partition_no}`,
		CheckpointAdvance: `UPDATE ${consumer_checkpoints_table} SET position = #{position}, epoch = #{epoch} ` +
			`WHERE consumer_id = #{consumer_id} AND source_name = #{source_name} AND partition_no = #{partition_no} ` +
			`AND (position IS NULL OR position < #{position}) AND COALESCE(epoch, 0) <= #{epoch_floor}`,
		CheckpointAdvanceOver: `UPDATE ${consumer_checkpoints_table} SET position = #{position}, epoch = #{epoch} ` +
			`WHERE consumer_id = #{consumer_id} AND source_name = #{source_name} AND partition_no = #{partition_no} ` +
			`AND (position IS NULL OR position < #{below}) AND COALESCE(epoch, 0) <= #{epoch_floor}`,
		CheckpointReset: `UPDATE ${consumer_checkpoints_table} SET position = NULL, epoch = #{epoch} WHERE consumer_id = #{consumer_id}`,
		CheckpointSetReplay: `UPDATE ${consumer_checkpoints_table} SET replay_through = #{through} ` +
			`WHERE consumer_id = #{consumer_id} AND source_name = #{source_name}`,
		CheckpointReadReplay: `SELECT source_name, partition_no, replay_through FROM ${consumer_checkpoints_table} WHERE consumer_id = #{consumer_id}`,
		CheckpointEndReplay:  `UPDATE ${consumer_checkpoints_table} SET replay_through = NULL, epoch = #{epoch} WHERE consumer_id = #{consumer_id}`,
		ConsumerEndReplay: `UPDATE ${consumers_table} SET epoch = #{epoch} ` +
			`WHERE id = #{id} AND COALESCE(epoch, 0) = #{epoch_floor} AND state IS NULL`,
		ConsumerReadFingerprint: `SELECT declaration_fingerprint FROM ${consumers_table} WHERE id = #{id}`,
		ConsumerSetFingerprint:  `UPDATE ${consumers_table} SET declaration_fingerprint = #{declaration_fingerprint} WHERE id = #{id}`,
	}
}
