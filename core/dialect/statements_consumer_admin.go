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
	// ConsumerList returns (id, consumer_type, consumer_name, state,
	// halt_reason, epoch, state_since) of every consumer.
	ConsumerList StatementID = "consumer_admin.list"
	// CheckpointIncomplete returns (source_name, partition_no,
	// incomplete_through) of every checkpoint of #{consumer_id}.
	CheckpointIncomplete StatementID = "consumer_admin.checkpoint_incomplete"
	// CheckpointCountSource returns the number of checkpoints of
	// #{consumer_id} on #{source_name}.
	CheckpointCountSource StatementID = "consumer_admin.checkpoint_count_source"
	// CheckpointDeleteSource deletes the checkpoints of #{consumer_id} on
	// #{source_name} (unsubscribe, after the rows that reference the
	// consumer on that source).
	CheckpointDeleteSource StatementID = "consumer_admin.checkpoint_delete_source"
	// ConsumerDeleteUnreferenced deletes the CONSUMERS row #{id} only when
	// no checkpoint, undelivered or skipped row references it: the row goes
	// with its last checkpoint, and never under a foreign-key error.
	ConsumerDeleteUnreferenced StatementID = "consumer_admin.delete_unreferenced"
	// UndeliveredCounts returns (status, n) per status of the undelivered
	// rows of #{consumer_id}.
	UndeliveredCounts StatementID = "consumer_admin.undelivered_counts"
	// UndeliveredList returns (id, source_name, partition_no, resolved_key,
	// message_position, status, failure_count, next_retry_at,
	// failure_reason, recorded_at) of every undelivered row of
	// #{consumer_id}, without the message copy.
	UndeliveredList StatementID = "consumer_admin.undelivered_list"
	// UndeliveredRelease sets status = #{status}, failure_count = 0 and
	// next_retry_at = NULL (a fresh budget, due at once) of row #{id} only
	// while its status is #{from_status}.
	UndeliveredRelease StatementID = "consumer_admin.undelivered_release"
	// UndeliveredDeleteOne deletes row #{id} only while its status is
	// #{from_status}.
	UndeliveredDeleteOne StatementID = "consumer_admin.undelivered_delete_one"
	// UndeliveredDeleteSource deletes the undelivered rows of
	// #{consumer_id} on #{source_name} (unsubscribe).
	UndeliveredDeleteSource StatementID = "consumer_admin.undelivered_delete_source"
	// SkippedDeleteSource deletes the skips of #{consumer_id} on
	// #{source_name} (unsubscribe).
	SkippedDeleteSource StatementID = "consumer_admin.skipped_delete_source"
)

var undeliveredTable = []string{"consumer_undelivered_messages_table"}

var consumerAdminStatements = []StatementSpec{
	{ID: ConsumerList, Tables: consumersTable, Returns: consumerColumns},
	{ID: CheckpointIncomplete, Binds: []string{"consumer_id"}, Tables: checkpointsTable, Returns: []string{"source_name", "partition_no", "incomplete_through"}},
	{ID: CheckpointCountSource, Binds: []string{"consumer_id", "source_name"}, Tables: checkpointsTable, Returns: []string{"n"}},
	{ID: CheckpointDeleteSource, Binds: []string{"consumer_id", "source_name"}, Tables: checkpointsTable},
	{ID: ConsumerDeleteUnreferenced, Binds: []string{"id"},
		Tables: []string{"consumers_table", "consumer_checkpoints_table", "consumer_undelivered_messages_table", "consumer_skipped_messages_table"}},
	{ID: UndeliveredCounts, Binds: []string{"consumer_id"}, Tables: undeliveredTable, Returns: []string{"status", "n"}},
	{ID: UndeliveredList, Binds: []string{"consumer_id"}, Tables: undeliveredTable, Returns: []string{"id", "source_name", "partition_no",
		"resolved_key", "message_position", "status", "failure_count", "next_retry_at", "failure_reason", "recorded_at"}},
	{ID: UndeliveredRelease, Binds: []string{"id", "status", "from_status"}, Tables: undeliveredTable},
	{ID: UndeliveredDeleteOne, Binds: []string{"id", "from_status"}, Tables: undeliveredTable},
	{ID: UndeliveredDeleteSource, Binds: []string{"consumer_id", "source_name"}, Tables: undeliveredTable},
	{ID: SkippedDeleteSource, Binds: []string{"consumer_id", "source_name"}, Tables: skippedTable},
}

func init() {
	for _, s := range consumerAdminStatements {
		if _, dup := specByID[s.ID]; dup {
			panic("dialect: statement " + string(s.ID) + " declared twice")
		}
		specByID[s.ID] = s
	}
}
