package dialect

// Consumers, on ${consumers_table} (one row per consumer: state, halt
// reason, epoch, state_since) and ${consumer_checkpoints_table} (one row
// per consumer × source × partition). The core generates ids (UUIDs) and
// binds state_since from the application's clock, in UTC. An epoch of NULL
// (never rebuilt) is passed as a NULL #{epoch} and compared as 0
// (#{epoch_floor}).
const (
	// ConsumerInsert inserts the row of a new consumer: #{id},
	// #{consumer_type}, #{consumer_name}, state, halt_reason and epoch NULL,
	// #{state_since}. A unique violation means the row exists (or one whose
	// names the collation does not tell apart); the core reads it back.
	ConsumerInsert StatementID = "consumer.insert"
	// ConsumerByName returns (id, consumer_type, consumer_name, state,
	// halt_reason, epoch, state_since) of the consumer #{consumer_type},
	// #{consumer_name} as the database compares them; the core compares the
	// names it gets back exactly.
	ConsumerByName StatementID = "consumer.by_name"
	// ConsumerByID returns the same columns as ConsumerByName for #{id}.
	ConsumerByID StatementID = "consumer.by_id"
	// ConsumerSetState sets state = #{state}, halt_reason = #{halt_reason}
	// and state_since = #{state_since} of #{id} only while its state is
	// #{from_state} (NULL compared as 'RUNNING'), so every transition is one
	// compare-and-set write; the core reads the affected row count.
	ConsumerSetState StatementID = "consumer.set_state"
	// ConsumerBeginRebuild is ConsumerSetState that also raises epoch by one
	// (NULL counts as 0).
	ConsumerBeginRebuild StatementID = "consumer.begin_rebuild"
	// CheckpointInsert inserts the checkpoint of #{consumer_id},
	// #{source_name}, #{partition_no} with position NULL and epoch #{epoch}.
	// A unique violation means it exists.
	CheckpointInsert StatementID = "checkpoint.insert"
	// CheckpointRead returns (source_name, partition_no, position, epoch) of
	// every checkpoint of #{consumer_id}.
	CheckpointRead StatementID = "checkpoint.read"
	// CheckpointReadOne returns (position, epoch) of the checkpoint of
	// #{consumer_id}, #{source_name}, #{partition_no}.
	CheckpointReadOne StatementID = "checkpoint.read_one"
	// CheckpointAdvance sets position = #{position} and epoch = #{epoch} of
	// #{consumer_id}, #{source_name}, #{partition_no} only when it moves the
	// position forward (position NULL or below #{position}) and the row's
	// epoch (NULL as 0) is at most #{epoch_floor}: a write that would move
	// the checkpoint back, or one from a poll begun before a rebuild, changes
	// nothing.
	CheckpointAdvance StatementID = "checkpoint.advance"
	// CheckpointAdvanceOver is CheckpointAdvance for an apply that commits
	// with its checkpoint: it changes the row only while its position is
	// NULL or below #{below}, the applied message's own position, so of
	// two instances applying one message only the first to write commits
	// (the second finds the position at or past it, however far the first
	// moved it).
	CheckpointAdvanceOver StatementID = "checkpoint.advance_over"
	// CheckpointReset sets position = NULL and epoch = #{epoch} on every
	// checkpoint of #{consumer_id} (a rebuild).
	CheckpointReset StatementID = "checkpoint.reset"
)

var consumerColumns = []string{"id", "consumer_type", "consumer_name", "state", "halt_reason", "epoch", "state_since"}

var consumersTable = []string{"consumers_table"}

var checkpointsTable = []string{"consumer_checkpoints_table"}

var consumerStatements = []StatementSpec{
	{ID: ConsumerInsert, Binds: []string{"id", "consumer_type", "consumer_name", "state_since"}, Tables: consumersTable},
	{ID: ConsumerByName, Binds: []string{"consumer_type", "consumer_name"}, Tables: consumersTable, Returns: consumerColumns},
	{ID: ConsumerByID, Binds: []string{"id"}, Tables: consumersTable, Returns: consumerColumns},
	{ID: ConsumerSetState, Binds: []string{"id", "state", "halt_reason", "state_since", "from_state"}, Tables: consumersTable},
	{ID: ConsumerBeginRebuild, Binds: []string{"id", "state", "state_since", "from_state"}, Tables: consumersTable},
	{ID: CheckpointInsert, Binds: []string{"consumer_id", "source_name", "partition_no", "epoch"}, Tables: checkpointsTable},
	{ID: CheckpointRead, Binds: []string{"consumer_id"}, Tables: checkpointsTable, Returns: []string{"source_name", "partition_no", "position", "epoch"}},
	{ID: CheckpointReadOne, Binds: []string{"consumer_id", "source_name", "partition_no"}, Tables: checkpointsTable, Returns: []string{"position", "epoch"}},
	{ID: CheckpointAdvance, Binds: []string{"consumer_id", "source_name", "partition_no", "position", "epoch", "epoch_floor"}, Tables: checkpointsTable},
	{ID: CheckpointAdvanceOver, Binds: []string{"consumer_id", "source_name", "partition_no", "position", "below", "epoch", "epoch_floor"}, Tables: checkpointsTable},
	{ID: CheckpointReset, Binds: []string{"consumer_id", "epoch"}, Tables: checkpointsTable},
}
