package dialect

// Operator controls of consumers (tidemark consumers …): reads for list,
// status and dead letters, and the row changes of pause, resume, resume
// past, retry or delete a dead letter, and unsubscribe. Every change is
// guarded by the status the core read, so a runner that moved a row
// meanwhile makes the change a no-op the core counts; the core runs each
// operation in one transaction. None of these names the checkpoint's
// position column, so a dialect that quotes it (a reserved word) overrides
// only the consumer statements it already does.
const (
	// AdminConsumerList returns (id, consumer_type, consumer_name, state,
	// halt_reason, epoch, state_since) of every consumer.
	AdminConsumerList StatementID = "consumer_admin.list"
	// AdminCheckpointIncomplete returns (source_name, partition_no,
	// incomplete_through) of every checkpoint of #{consumer_id}.
	AdminCheckpointIncomplete StatementID = "consumer_admin.checkpoint_incomplete"
	// AdminCheckpointCountSource returns the number of checkpoints of
	// #{consumer_id} on #{source_name}.
	AdminCheckpointCountSource StatementID = "consumer_admin.checkpoint_count_source"
	// AdminCheckpointDeleteSource deletes the checkpoints of #{consumer_id} on
	// #{source_name} (unsubscribe, after the rows that reference the
	// consumer on that source).
	AdminCheckpointDeleteSource StatementID = "consumer_admin.checkpoint_delete_source"
	// AdminConsumerDeleteUnreferenced deletes the CONSUMERS row #{id} only when
	// no checkpoint, undelivered or skipped row references it: the row goes
	// with its last checkpoint, and never under a foreign-key error.
	AdminConsumerDeleteUnreferenced StatementID = "consumer_admin.delete_unreferenced"
	// AdminUndeliveredCounts returns (status, n) per status of the undelivered
	// rows of #{consumer_id}.
	AdminUndeliveredCounts StatementID = "consumer_admin.undelivered_counts"
	// AdminUndeliveredList returns (id, source_name, partition_no, resolved_key,
	// message_position, status, failure_count, next_retry_at,
	// failure_reason, recorded_at) of every undelivered row of
	// #{consumer_id}, without the message copy.
	AdminUndeliveredList StatementID = "consumer_admin.undelivered_list"
	// AdminUndeliveredRelease sets status = #{status}, failure_count = 0 and
	// next_retry_at = NULL (a fresh budget, due at once) of row #{id} only
	// while its status is #{from_status}.
	AdminUndeliveredRelease StatementID = "consumer_admin.undelivered_release"
	// AdminUndeliveredDeleteOne deletes row #{id} only while its status is
	// #{from_status}.
	AdminUndeliveredDeleteOne StatementID = "consumer_admin.undelivered_delete_one"
	// AdminUndeliveredDeleteSource deletes the undelivered rows of
	// #{consumer_id} on #{source_name} (unsubscribe).
	AdminUndeliveredDeleteSource StatementID = "consumer_admin.undelivered_delete_source"
	// AdminSkippedDeleteSource deletes the skips of #{consumer_id} on
	// #{source_name} (unsubscribe).
	AdminSkippedDeleteSource StatementID = "consumer_admin.skipped_delete_source"
)

var adminUndeliveredTable = []string{"consumer_undelivered_messages_table"}

var consumerAdminStatements = []StatementSpec{
	{ID: AdminConsumerList, Tables: consumersTable, Returns: consumerColumns},
	{ID: AdminCheckpointIncomplete, Binds: []string{"consumer_id"}, Tables: checkpointsTable, Returns: []string{"source_name", "partition_no", "incomplete_through"}},
	{ID: AdminCheckpointCountSource, Binds: []string{"consumer_id", "source_name"}, Tables: checkpointsTable, Returns: []string{"n"}},
	{ID: AdminCheckpointDeleteSource, Binds: []string{"consumer_id", "source_name"}, Tables: checkpointsTable},
	{ID: AdminConsumerDeleteUnreferenced, Binds: []string{"id"},
		Tables: []string{"consumers_table", "consumer_checkpoints_table", "consumer_undelivered_messages_table", "consumer_skipped_messages_table"}},
	{ID: AdminUndeliveredCounts, Binds: []string{"consumer_id"}, Tables: adminUndeliveredTable, Returns: []string{"status", "n"}},
	{ID: AdminUndeliveredList, Binds: []string{"consumer_id"}, Tables: adminUndeliveredTable, Returns: []string{"id", "source_name", "partition_no",
		"resolved_key", "message_position", "status", "failure_count", "next_retry_at", "failure_reason", "recorded_at"}},
	{ID: AdminUndeliveredRelease, Binds: []string{"id", "status", "from_status"}, Tables: adminUndeliveredTable},
	{ID: AdminUndeliveredDeleteOne, Binds: []string{"id", "from_status"}, Tables: adminUndeliveredTable},
	{ID: AdminUndeliveredDeleteSource, Binds: []string{"consumer_id", "source_name"}, Tables: adminUndeliveredTable},
	{ID: AdminSkippedDeleteSource, Binds: []string{"consumer_id", "source_name"}, Tables: skippedTable},
}
