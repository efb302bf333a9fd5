package firebird

import "github.com/tidemarkdb/tidemark/core/dialect"

// consumerStatements are the consumer statements Firebird 3 cannot run as
// ANSI writes them: POSITION is a reserved word there, so this DDL quotes
// the checkpoints' column ("POSITION") and every statement naming it must
// too. Catalogue() merges them with one line after ANSI's statements:
//
//	maps.Copy(st, consumerStatements())
func consumerStatements() map[dialect.StatementID]string {
	return map[dialect.StatementID]string{
		dialect.CheckpointInsert: `INSERT INTO ${consumer_checkpoints_table} (consumer_id, source_name, partition_no, "POSITION", incomplete_through, replay_through, epoch) ` +
			`VALUES (#{consumer_id}, #{source_name}, #{partition_no}, NULL, NULL, NULL, #{epoch})`,
		dialect.CheckpointRead:    `SELECT source_name, partition_no, "POSITION", epoch FROM ${consumer_checkpoints_table} WHERE consumer_id = #{consumer_id}`,
		dialect.TopicCheckpoints:  `SELECT consumer_id, "POSITION" FROM ${consumer_checkpoints_table} WHERE source_name = #{topic}`,
		dialect.CheckpointReadOne: `SELECT "POSITION", epoch FROM ${consumer_checkpoints_table} WHERE consumer_id = #{consumer_id} AND source_name = #{source_name} AND partition_no = #{partition_no}`,
		dialect.CheckpointAdvance: `UPDATE ${consumer_checkpoints_table} SET "POSITION" = #{position}, epoch = #{epoch} ` +
			`WHERE consumer_id = #{consumer_id} AND source_name = #{source_name} AND partition_no = #{partition_no} ` +
			`AND ("POSITION" IS NULL OR "POSITION" < #{position}) AND COALESCE(epoch, 0) <= #{epoch_floor}`,
		dialect.CheckpointAdvanceOver: `UPDATE ${consumer_checkpoints_table} SET "POSITION" = #{position}, epoch = #{epoch} ` +
			`WHERE consumer_id = #{consumer_id} AND source_name = #{source_name} AND partition_no = #{partition_no} ` +
			`AND ("POSITION" IS NULL OR "POSITION" < #{below}) AND COALESCE(epoch, 0) <= #{epoch_floor}`,
		dialect.CheckpointReset: `UPDATE ${consumer_checkpoints_table} SET "POSITION" = NULL, epoch = #{epoch} WHERE consumer_id = #{consumer_id}`,
	}
}
