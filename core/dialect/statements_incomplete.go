package dialect

// The incomplete-history mark, CONSUMER_CHECKPOINTS.incomplete_through: set
// on every checkpoint of a consumer's read of a topic when the runner found
// the topic's history deleted underneath it; it only rises.
const (
	// CheckpointReadIncomplete returns (source_name, partition_no,
	// incomplete_through) of every checkpoint of #{consumer_id}.
	CheckpointReadIncomplete StatementID = "checkpoint.read_incomplete"
	// CheckpointMarkIncomplete sets incomplete_through = #{through} on every
	// checkpoint of #{consumer_id} on #{source_name} whose mark is NULL or
	// below #{through}.
	CheckpointMarkIncomplete StatementID = "checkpoint.mark_incomplete"
)

var incompleteStatements = []StatementSpec{
	{ID: CheckpointReadIncomplete, Binds: []string{"consumer_id"}, Tables: checkpointsTable,
		Returns: []string{"source_name", "partition_no", "incomplete_through"}},
	{ID: CheckpointMarkIncomplete, Binds: []string{"consumer_id", "source_name", "through"}, Tables: checkpointsTable},
}
