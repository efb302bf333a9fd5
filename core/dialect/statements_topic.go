package dialect

// The capture topic: EVENT_CAPTURE_RECORDS, its position object
// EVENT_CAPTURE_GLOBAL_POSITION (through the position seam, as
// ${event_capture_global_position_table}), its row of the high-water-mark
// store, and the consumers' checkpoints on it (read by retention). Every
// read returns the record columns in TopicColumns order.
const (
	// TopicRange reads ${event_capture_records_table} with global_position
	// in (#{after}, #{upto}], in position order, at most #{limit} rows.
	TopicRange StatementID = "topic.range"
	// TopicPartitionRange is TopicRange restricted to partition_key =
	// #{partition}.
	TopicPartitionRange StatementID = "topic.partition_range"
	// TopicBounds returns (high_water_mark, topic_start) of #{topic}'s row
	// of ${high_water_mark_store_table}.
	TopicBounds StatementID = "topic.bounds"
	// TopicSetStart sets topic_start = #{start} on #{topic}'s row only when
	// it is below #{start} (it only ever moves forward).
	TopicSetStart StatementID = "topic.set_start"
	// TopicDeleteThrough deletes every row of ${event_capture_records_table}
	// with global_position in (#{after}, #{through}].
	TopicDeleteThrough StatementID = "topic.delete_through"
	// TopicFirstSince returns one column, the lowest global_position above
	// #{after} whose occurred_at is at or after #{cutoff} (NULL for none).
	TopicFirstSince StatementID = "topic.first_since"
	// TopicCount returns one column, how many rows have global_position in
	// (#{after}, #{upto}].
	TopicCount StatementID = "topic.count"
	// TopicPositions returns the global_position of the rows in (#{after},
	// #{upto}], in position order, at most #{limit} rows.
	TopicPositions StatementID = "topic.positions"
	// TopicCheckpoints returns (consumer_id, position) of every checkpoint
	// row on source #{topic} in ${consumer_checkpoints_table}; a dialect
	// where POSITION is reserved quotes it, as in its checkpoint
	// statements. A few rows per consumer and partition.
	TopicCheckpoints StatementID = "topic.checkpoints"
)

// TopicColumns is the column list of every capture-topic read, in order.
const TopicColumns = `id, global_position, partition_key, event_type, event_revision, payload, metadata, occurred_at, message_key`

var topicColumnList = []string{"id", "global_position", "partition_key", "event_type", "event_revision", "payload", "metadata", "occurred_at", "message_key"}

var topicRecords = []string{"event_capture_records_table"}

// CaptureInsertBinds are the #{names} the capture insert (Catalogue.
// CaptureInsert) may bind; #{global_position} only under CounterRow.
var CaptureInsertBinds = []string{"id", "global_position", "partition_key", "event_type", "event_revision", "payload", "metadata", "occurred_at", "message_key"}

var captureInsertSpec = StatementSpec{Binds: CaptureInsertBinds, Tables: []string{"event_capture_records_table", "event_capture_global_position_table"}, Returns: []string{"global_position"}}

var topicStatements = []StatementSpec{
	{ID: TopicRange, Binds: []string{"after", "upto", "limit"}, Tables: topicRecords, Returns: topicColumnList},
	{ID: TopicPartitionRange, Binds: []string{"partition", "after", "upto", "limit"}, Tables: topicRecords, Returns: topicColumnList},
	{ID: TopicBounds, Binds: []string{"topic"}, Tables: hwmTable, Returns: []string{"high_water_mark", "topic_start"}},
	{ID: TopicSetStart, Binds: []string{"topic", "start"}, Tables: hwmTable},
	{ID: TopicDeleteThrough, Binds: []string{"after", "through"}, Tables: topicRecords},
	{ID: TopicFirstSince, Binds: []string{"after", "cutoff"}, Tables: topicRecords, Returns: []string{"global_position"}},
	{ID: TopicCount, Binds: []string{"after", "upto"}, Tables: topicRecords, Returns: []string{"count"}},
	{ID: TopicPositions, Binds: []string{"after", "upto", "limit"}, Tables: topicRecords, Returns: []string{"global_position"}},
	{ID: TopicCheckpoints, Binds: []string{"topic"}, Tables: []string{"consumer_checkpoints_table"}, Returns: []string{"consumer_id", "position"}},
}
