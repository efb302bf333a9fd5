package dialect

// ansiRMTopicStatements are the read-model topics' statements in ANSI SQL
// (LimitPaging rewrites their paging like the other reads'). The publish
// statement is Catalogue.ReadModelInsert; the counter statements follow
// the one-row counter's (ansiStatements) with the topic's row instead.
func ansiRMTopicStatements() map[StatementID]string {
	const rec, pos = `${read_model_capture_records_table}`, `${read_model_capture_positions_table}`
	return map[StatementID]string{
		RMTopicRange: `SELECT ` + ReadModelColumns + ` FROM ` + rec + ` WHERE topic = #{topic} AND topic_position > #{after} AND topic_position <= #{upto} ` +
			`ORDER BY topic_position FETCH FIRST #{limit} ROWS ONLY`,
		RMTopicPartitionRange: `SELECT ` + ReadModelColumns + ` FROM ` + rec + ` WHERE topic = #{topic} AND partition_key = #{partition} AND topic_position > #{after} AND topic_position <= #{upto} ` +
			`ORDER BY topic_position FETCH FIRST #{limit} ROWS ONLY`,
		RMTopicByID:   `SELECT ` + ReadModelColumns + ` FROM ` + rec + ` WHERE id = #{id}`,
		RMTopicLatest: `SELECT ` + ReadModelColumns + ` FROM ` + rec + ` WHERE topic = #{topic} AND read_model_key = #{key} ORDER BY topic_position DESC FETCH FIRST 1 ROW ONLY`,
		RMTopicSeed: `MERGE INTO ` + pos + ` t USING (VALUES (CAST(#{topic} AS VARCHAR(255)), 0)) AS s (topic, val) ON t.topic = s.topic ` +
			`WHEN NOT MATCHED THEN INSERT (topic, val) VALUES (s.topic, s.val)`,
		RMTopicAllocate:  `UPDATE ` + pos + ` SET val = val + #{count} WHERE topic = #{topic}`,
		RMTopicAllocated: `SELECT val FROM ` + pos + ` WHERE topic = #{topic}`,
		RMTopicEnd:       `SELECT val FROM ` + pos + ` WHERE topic = #{topic}`,

		RMTopicCompactDelete: `DELETE FROM ` + rec + ` WHERE topic = #{topic} AND EXISTS (SELECT 1 FROM ` + rec + ` n ` +
			`WHERE n.topic = ` + rec + `.topic AND n.read_model_key = ` + rec + `.read_model_key AND n.topic_position > ` + rec + `.topic_position ` +
			`AND n.topic_position > #{after} AND n.topic_position <= #{through})`,
		RMTopicCompactedThrough:  `SELECT compacted_through FROM ${topic_compaction_table} WHERE topic_name = #{topic}`,
		RMTopicCompactionInsert:  `INSERT INTO ${topic_compaction_table} (topic_name, compacted_through) VALUES (#{topic}, #{through})`,
		RMTopicCompactionAdvance: `UPDATE ${topic_compaction_table} SET compacted_through = #{through} WHERE topic_name = #{topic} AND compacted_through < #{through}`,
		RMTopicDeleteTombstones:  `DELETE FROM ` + rec + ` WHERE topic = #{topic} AND deleted = #{deleted} AND topic_position < #{below} AND occurred_at < #{cutoff}`,
	}
}
