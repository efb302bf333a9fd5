package dialect

// Skipped messages, on ${consumer_skipped_messages_table}: one row per
// message a consumer passes over (an operator's skip, a resume past a
// poison message, a deleted dead letter), honoured by every instance. The
// core derives the id from (consumer, source, partition, position, key),
// so a skip recorded twice is one row.
const (
	// SkippedInsert inserts #{id}, #{consumer_id}, #{source_name},
	// #{partition_no}, #{message_position}, #{resolved_key}, #{every_key}
	// (a boolean). A unique violation means the skip exists.
	SkippedInsert StatementID = "skipped.insert"
	// SkippedExists returns one row (any column) when the skip #{id}
	// exists, none otherwise: inside a transaction the core checks before
	// it inserts, because a failed INSERT aborts the transaction on
	// PostgreSQL.
	SkippedExists StatementID = "skipped.exists"
	// SkippedRead returns (partition_no, message_position, resolved_key,
	// every_key) of the skips of #{consumer_id} on #{source_name} with
	// message_position above #{after}: one probe of
	// idx_consumer_skipped_messages_position per poll.
	SkippedRead StatementID = "skipped.read"
)

var skippedTable = []string{"consumer_skipped_messages_table"}

var skippedStatements = []StatementSpec{
	{ID: SkippedInsert, Binds: []string{"id", "consumer_id", "source_name", "partition_no", "message_position", "resolved_key", "every_key"}, Tables: skippedTable},
	{ID: SkippedExists, Binds: []string{"id"}, Tables: skippedTable, Returns: []string{"id"}},
	{ID: SkippedRead, Binds: []string{"consumer_id", "source_name", "after"}, Tables: skippedTable,
		Returns: []string{"partition_no", "message_position", "resolved_key", "every_key"}},
}

// ansiSkippedStatements are the skipped-message statements in ANSI SQL.
func ansiSkippedStatements() map[StatementID]string {
	return map[StatementID]string{
		SkippedInsert: `INSERT INTO ${consumer_skipped_messages_table} (id, consumer_id, source_name, partition_no, message_position, resolved_key, every_key) ` +
			`VALUES (#{id}, #{consumer_id}, #{source_name}, #{partition_no}, #{message_position}, #{resolved_key}, #{every_key})`,
		SkippedExists: `SELECT id FROM ${consumer_skipped_messages_table} WHERE id = #{id}`,
		SkippedRead: `SELECT partition_no, message_position, resolved_key, every_key FROM ${consumer_skipped_messages_table} ` +
			`WHERE consumer_id = #{consumer_id} AND source_name = #{source_name} AND message_position > #{after}`,
	}
}
