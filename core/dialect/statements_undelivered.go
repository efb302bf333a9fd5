package dialect

// Undelivered messages, on ${consumer_undelivered_messages_table}: one row
// per message and key a consumer could not apply yet (FAILED, WAITING, or a
// dead letter: HALTED, DEAD_LETTER_KEY, DEAD_LETTER). The runner writes
// them; the operator controls change them; the runner of every instance
// reads them again at its next poll. Times are bound in UTC from the
// application's clock; key_hash is the core's FNV-1a 64 of resolved_key.
const (
	// UndeliveredInsert inserts #{id}, #{consumer_id}, #{source_name},
	// #{resolved_key}, #{key_hash}, #{message_position}, #{partition_no},
	// #{status}, #{failure_count}, #{next_retry_at}, #{failure_reason},
	// #{recorded_at}, #{unresolved} (a boolean), #{message_copy}.
	UndeliveredInsert StatementID = "undelivered.insert"
	// UndeliveredRead returns (id, source_name, partition_no, resolved_key,
	// message_position, status, failure_count, next_retry_at, failure_reason,
	// recorded_at) of every row
	// of #{consumer_id}, without the copies (a poll reads the copy of a row
	// only when it applies it).
	UndeliveredRead StatementID = "undelivered.read"
	// UndeliveredCopy returns (message_copy) of the row #{id}.
	UndeliveredCopy StatementID = "undelivered.copy"
	// UndeliveredDelete deletes the row #{id} while its status is
	// #{from_status}; the core reads the affected row count (0: an operator
	// changed it meanwhile).
	UndeliveredDelete StatementID = "undelivered.delete"
	// UndeliveredUpdate sets status = #{status}, failure_count =
	// #{failure_count}, next_retry_at = #{next_retry_at} and failure_reason =
	// #{failure_reason} of the row #{id} only while its status is
	// #{from_status} and its failure_count #{from_count}: a compare-and-set,
	// so an operator's change made meanwhile wins (affected row count 0).
	UndeliveredUpdate StatementID = "undelivered.update"
	// UndeliveredHoldKey sets status = #{status} (DEAD_LETTER_KEY) on every
	// row of #{consumer_id}, #{source_name}, #{partition_no}, #{key_hash},
	// #{resolved_key} whose status is #{from_status} (WAITING): the key's
	// later messages held dead behind its first dead letter.
	UndeliveredHoldKey StatementID = "undelivered.hold_key"
	// SkippedDeletePassed deletes the skips of #{consumer_id} on
	// #{source_name} at or below #{through} (the lowest checkpoint of the
	// consumer's partitions of the source) at whose position no undelivered
	// row of the consumer and source lies.
	SkippedDeletePassed StatementID = "skipped.delete_passed"
)

var undeliveredTable = []string{"consumer_undelivered_messages_table"}

var undeliveredStatements = []StatementSpec{
	{ID: UndeliveredInsert, Binds: []string{"id", "consumer_id", "source_name", "resolved_key", "key_hash", "message_position", "partition_no",
		"status", "failure_count", "next_retry_at", "failure_reason", "recorded_at", "unresolved", "message_copy"}, Tables: undeliveredTable},
	{ID: UndeliveredRead, Binds: []string{"consumer_id"}, Tables: undeliveredTable,
		Returns: []string{"id", "source_name", "partition_no", "resolved_key", "message_position", "status", "failure_count", "next_retry_at", "failure_reason", "recorded_at"}},
	{ID: UndeliveredCopy, Binds: []string{"id"}, Tables: undeliveredTable, Returns: []string{"message_copy"}},
	{ID: UndeliveredDelete, Binds: []string{"id", "from_status"}, Tables: undeliveredTable},
	{ID: UndeliveredUpdate, Binds: []string{"id", "status", "failure_count", "next_retry_at", "failure_reason", "from_status", "from_count"}, Tables: undeliveredTable},
	{ID: UndeliveredHoldKey, Binds: []string{"consumer_id", "source_name", "partition_no", "key_hash", "resolved_key", "status", "from_status"}, Tables: undeliveredTable},
	{ID: SkippedDeletePassed, Binds: []string{"consumer_id", "source_name", "through"},
		Tables: []string{"consumer_skipped_messages_table", "consumer_undelivered_messages_table"}},
}
