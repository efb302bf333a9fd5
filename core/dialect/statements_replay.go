package dialect

// A projection's rebuild without downtime and its declaration fingerprint:
// CONSUMER_CHECKPOINTS.replay_through (how far a rebuild replays each
// source; NULL otherwise) and CONSUMERS.declaration_fingerprint.
const (
	// CheckpointSetReplay sets replay_through = #{through} on every
	// checkpoint of #{consumer_id} on #{source_name}.
	CheckpointSetReplay StatementID = "checkpoint.set_replay"
	// CheckpointReadReplay returns (source_name, partition_no,
	// replay_through) of every checkpoint of #{consumer_id}.
	CheckpointReadReplay StatementID = "checkpoint.read_replay"
	// CheckpointEndReplay sets replay_through = NULL and epoch = #{epoch}
	// on every checkpoint of #{consumer_id}, keeping its position: the
	// switch of a rebuild, which fences polls begun before it.
	CheckpointEndReplay StatementID = "checkpoint.end_replay"
	// ConsumerEndReplay sets epoch = #{epoch} of #{id} only while its
	// epoch (NULL as 0) is #{epoch_floor} and it runs (state NULL): the
	// switch of a rebuild's replay, one compare-and-set write, so of two
	// switches of one replay only the first changes the row.
	ConsumerEndReplay StatementID = "consumer.end_replay"
	// ConsumerReadFingerprint returns (declaration_fingerprint) of #{id}.
	ConsumerReadFingerprint StatementID = "consumer.read_fingerprint"
	// ConsumerSetFingerprint sets declaration_fingerprint =
	// #{declaration_fingerprint} of #{id}.
	ConsumerSetFingerprint StatementID = "consumer.set_fingerprint"
)

var replayStatements = []StatementSpec{
	{ID: CheckpointSetReplay, Binds: []string{"consumer_id", "source_name", "through"}, Tables: checkpointsTable},
	{ID: CheckpointReadReplay, Binds: []string{"consumer_id"}, Tables: checkpointsTable,
		Returns: []string{"source_name", "partition_no", "replay_through"}},
	{ID: CheckpointEndReplay, Binds: []string{"consumer_id", "epoch"}, Tables: checkpointsTable},
	{ID: ConsumerEndReplay, Binds: []string{"id", "epoch", "epoch_floor"}, Tables: consumersTable},
	{ID: ConsumerReadFingerprint, Binds: []string{"id"}, Tables: consumersTable, Returns: []string{"declaration_fingerprint"}},
	{ID: ConsumerSetFingerprint, Binds: []string{"id", "declaration_fingerprint"}, Tables: consumersTable},
}
