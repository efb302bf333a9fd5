package dialect

// ansiTopicStatements are the capture topic's statements in ANSI SQL
// (merged with the other areas' by ANSI(); LimitPaging rewrites their paging like the
// event reads'). The publish statement is Catalogue.CaptureInsert.
func ansiTopicStatements() map[StatementID]string {
	const rec = `${event_capture_records_table}`
	return map[StatementID]string{
		TopicRange:          `SELECT ` + TopicColumns + ` FROM ` + rec + ` WHERE global_position > #{after} AND global_position <= #{upto} ORDER BY global_position FETCH FIRST #{limit} ROWS ONLY`,
		TopicPartitionRange: `SELECT ` + TopicColumns + ` FROM ` + rec + ` WHERE partition_key = #{partition} AND global_position > #{after} AND global_position <= #{upto} ORDER BY global_position FETCH FIRST #{limit} ROWS ONLY`,
		TopicBounds:         `SELECT high_water_mark, topic_start FROM ${high_water_mark_store_table} WHERE topic_name = #{topic}`,
		TopicSetStart:       `UPDATE ${high_water_mark_store_table} SET topic_start = #{start} WHERE topic_name = #{topic} AND topic_start < #{start}`,
		TopicDeleteThrough:  `DELETE FROM ` + rec + ` WHERE global_position > #{after} AND global_position <= #{through}`,
		TopicFirstSince:     `SELECT MIN(global_position) FROM ` + rec + ` WHERE global_position > #{after} AND occurred_at >= #{cutoff}`,
		TopicCount:          `SELECT COUNT(*) FROM ` + rec + ` WHERE global_position > #{after} AND global_position <= #{upto}`,
		TopicPositions:      `SELECT global_position FROM ` + rec + ` WHERE global_position > #{after} AND global_position <= #{upto} ORDER BY global_position FETCH FIRST #{limit} ROWS ONLY`,
		TopicCheckpoints:    `SELECT consumer_id, position FROM ${consumer_checkpoints_table} WHERE source_name = #{topic}`,
	}
}
