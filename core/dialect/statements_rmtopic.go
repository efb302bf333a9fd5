package dialect

// The read-model topics: READ_MODEL_CAPTURE_RECORDS holds the messages of
// every topic of a datasource, told apart by topic (the projection's name).
// Their positions come from READ_MODEL_CAPTURE_POSITIONS: on a counter
// engine one row (topic, val) per topic, whose committed value is the
// topic's readable end; under SequenceXIDHorizon one sequence shared by
// every topic, with one mark row (read-model-topics) advanced by the
// high-water-mark advancer. Every read returns ReadModelColumns in order.
const (
	// RMTopicRange reads #{topic}'s rows of ${read_model_capture_records_table}
	// with topic_position in (#{after}, #{upto}], in position order, at
	// most #{limit} rows.
	RMTopicRange StatementID = "rmtopic.range"
	// RMTopicPartitionRange is RMTopicRange restricted to partition_key =
	// #{partition}.
	RMTopicPartitionRange StatementID = "rmtopic.partition_range"
	// RMTopicByID reads the row whose id is #{id} (none or one).
	RMTopicByID StatementID = "rmtopic.by_id"
	// RMTopicLatest reads the row of #{topic} and read_model_key = #{key}
	// with the highest topic_position (none or one), through
	// idx_read_model_capture_records_key.
	RMTopicLatest StatementID = "rmtopic.latest"
	// RMTopicSeed (counter) inserts (#{topic}, 0) into
	// ${read_model_capture_positions_table} unless #{topic}'s row exists;
	// never overwrites.
	RMTopicSeed StatementID = "rmtopic.seed"
	// RMTopicLock (counter, required with CounterLockFirst) locks #{topic}'s
	// row of ${read_model_capture_positions_table} without changing it, as
	// PositionLock does for a one-row counter.
	RMTopicLock StatementID = "rmtopic.lock"
	// RMTopicAllocate (counter) adds #{count} to #{topic}'s row and holds it
	// locked until the transaction ends; its single returned column, when
	// it returns a row, is the new value, as PositionAllocate's.
	RMTopicAllocate StatementID = "rmtopic.allocate"
	// RMTopicAllocated (counter) returns #{topic}'s value this transaction
	// just set. Empty when RMTopicAllocate returns it.
	RMTopicAllocated StatementID = "rmtopic.allocated"
	// RMTopicEnd (counter) returns #{topic}'s committed value (a plain,
	// non-locking read): every position at or below it is committed, so it
	// is the topic's mark. No row: the topic was never seeded.
	RMTopicEnd StatementID = "rmtopic.end"
	// RMTopicSequenceFloor (sequence) moves the shared sequence
	// ${read_model_capture_positions_table} past the highest topic_position
	// of #{topic} and past the high_water_mark of #{mark_topic}'s row of ${high_water_mark_store_table} when
	// it is behind either (recreated), and does nothing otherwise.
	RMTopicSequenceFloor StatementID = "rmtopic.sequence_floor"

	// RMTopicCompactDelete deletes every row of #{topic} superseded by a
	// newer row of its read_model_key whose topic_position is in
	// (#{after}, #{through}] (the newer row's position above the older's).
	RMTopicCompactDelete StatementID = "rmtopic.compact_delete"
	// RMTopicCompactedThrough returns one column, compacted_through of
	// #{topic}'s row of ${topic_compaction_table} (no row: never compacted).
	RMTopicCompactedThrough StatementID = "rmtopic.compacted_through"
	// RMTopicCompactionInsert inserts (#{topic}, #{through}) into
	// ${topic_compaction_table}.
	RMTopicCompactionInsert StatementID = "rmtopic.compaction_insert"
	// RMTopicCompactionAdvance sets compacted_through = #{through} on
	// #{topic}'s row only when it is below #{through} (it only rises).
	RMTopicCompactionAdvance StatementID = "rmtopic.compaction_advance"
	// RMTopicDeleteTombstones deletes #{topic}'s rows with deleted =
	// #{deleted} (bound true), topic_position below #{below} and occurred_at
	// before #{cutoff}.
	RMTopicDeleteTombstones StatementID = "rmtopic.delete_tombstones"
)

// ReadModelColumns is the column list of every read-model topic read, in
// order.
const ReadModelColumns = `id, topic, topic_position, partition_key, read_model_key, read_model_type, read_model_revision, payload, metadata, cascade_depth, deleted, occurred_at`

var readModelColumnList = []string{"id", "topic", "topic_position", "partition_key", "read_model_key", "read_model_type", "read_model_revision", "payload", "metadata", "cascade_depth", "deleted", "occurred_at"}

// ReadModelInsertColumns are the columns ANSI's read-model insert writes
// (read_model_revision keeps its default, 0).
const ReadModelInsertColumns = `id, topic, topic_position, partition_key, read_model_key, read_model_type, payload, metadata, cascade_depth, deleted, occurred_at`

var rmRecords = []string{"read_model_capture_records_table"}

var rmCompaction = []string{"topic_compaction_table"}

var rmPositions = []string{"read_model_capture_positions_table"}

// ReadModelInsertBinds are the #{names} the read-model insert (Catalogue.
// ReadModelInsert) may bind; #{topic_position} only under CounterRow.
var ReadModelInsertBinds = []string{"id", "topic", "topic_position", "partition_key", "read_model_key", "read_model_type", "payload", "metadata", "cascade_depth", "deleted", "occurred_at"}

var readModelInsertSpec = StatementSpec{Binds: ReadModelInsertBinds, Tables: []string{"read_model_capture_records_table", "read_model_capture_positions_table"}, Returns: []string{"topic_position"}}

var rmTopicStatements = []StatementSpec{
	{ID: RMTopicRange, Binds: []string{"topic", "after", "upto", "limit"}, Tables: rmRecords, Returns: readModelColumnList},
	{ID: RMTopicPartitionRange, Binds: []string{"topic", "partition", "after", "upto", "limit"}, Tables: rmRecords, Returns: readModelColumnList},
	{ID: RMTopicByID, Binds: []string{"id"}, Tables: rmRecords, Returns: readModelColumnList},
	{ID: RMTopicLatest, Binds: []string{"topic", "key"}, Tables: rmRecords, Returns: readModelColumnList},
	{ID: RMTopicSeed, Strategy: CounterRow, Binds: []string{"topic"}, Tables: rmPositions},
	{ID: RMTopicLock, Strategy: CounterRow, Optional: true, Binds: []string{"topic", "count"}, Tables: rmPositions},
	{ID: RMTopicAllocate, Strategy: CounterRow, Binds: []string{"topic", "count"}, Tables: rmPositions, Returns: []string{"val"}},
	{ID: RMTopicAllocated, Strategy: CounterRow, Optional: true, Binds: []string{"topic", "count"}, Tables: rmPositions, Returns: []string{"val"}},
	{ID: RMTopicEnd, Strategy: CounterRow, Binds: []string{"topic"}, Tables: rmPositions, Returns: []string{"val"}},
	{ID: RMTopicCompactDelete, Binds: []string{"topic", "after", "through"}, Tables: rmRecords},
	{ID: RMTopicCompactedThrough, Binds: []string{"topic"}, Tables: rmCompaction, Returns: []string{"compacted_through"}},
	{ID: RMTopicCompactionInsert, Binds: []string{"topic", "through"}, Tables: rmCompaction},
	{ID: RMTopicCompactionAdvance, Binds: []string{"topic", "through"}, Tables: rmCompaction},
	{ID: RMTopicDeleteTombstones, Binds: []string{"topic", "deleted", "below", "cutoff"}, Tables: rmRecords},
	{ID: RMTopicSequenceFloor, Strategy: SequenceXIDHorizon, Binds: []string{"topic", "mark_topic"}, Tables: []string{"read_model_capture_positions_table", "read_model_capture_records_table", "high_water_mark_store_table"}},
}
