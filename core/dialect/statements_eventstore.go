package dialect

// The event store: stream versions, reads and snapshots. Every read returns
// the event columns in this order: id, aggregate_id, aggregate_type,
// sequence_no, event_type, event_revision, payload, metadata, occurred_at,
// partition_key, global_position (EventColumns).
const (
	// StreamVersion returns (sequence_no, aggregate_type) of the row of
	// aggregate #{aggregate_id} in ${event_store_table} with the highest
	// sequence_no, and no row when there is none. The core compares the type
	// with its own: an id another type holds in a shared table is not this
	// type's stream (its version is -1) and cannot be appended to.
	StreamVersion StatementID = "event.stream_version"
	// StreamVersions is StreamVersion for up to StreamVersionsWidth streams
	// at once (a group commit's): (aggregate_id, sequence_no,
	// aggregate_type) of the highest-sequence row of each aggregate among
	// #{id_a} … #{id_p} in ${event_store_table}; no row for an aggregate
	// with none. The core repeats an id to fill unused binds. Optional: the
	// core reads stream by stream without it.
	StreamVersions StatementID = "event.stream_versions"
	// EventStream reads aggregate #{aggregate_id} of type #{aggregate_type}
	// in ${event_store_table} with sequence_no > #{after_sequence}, in
	// sequence order.
	EventStream StatementID = "event.stream"
	// EventRange reads ${event_store_table} with global_position in
	// (#{after}, #{upto}], in position order, at most #{limit} rows.
	EventRange StatementID = "event.range"
	// EventPartitionRange is EventRange restricted to partition_key = #{partition}.
	EventPartitionRange StatementID = "event.partition_range"
	// SnapshotInsert inserts into ${aggregate_snapshots_table}: #{id},
	// #{aggregate_id}, #{aggregate_type}, #{sequence_no}, #{snapshot_version},
	// #{payload}, #{created_at}.
	SnapshotInsert StatementID = "snapshot.insert"
	// SnapshotLatest returns (sequence_no, payload, created_at) of the newest
	// snapshot of #{aggregate_id}, #{aggregate_type}, #{snapshot_version}
	// in ${aggregate_snapshots_table}; no row when there is none.
	SnapshotLatest StatementID = "snapshot.latest"
)

// StreamVersionsWidth is the number of ids StreamVersions binds: 16, the
// writers a group commit serves in one batch in the bench (more streams
// take more reads of 16).
const StreamVersionsWidth = 16

// StreamVersionsBinds are StreamVersions' binds, one per id.
var StreamVersionsBinds = []string{"id_a", "id_b", "id_c", "id_d", "id_e", "id_f", "id_g", "id_h", "id_i", "id_j", "id_k", "id_l", "id_m", "id_n", "id_o", "id_p"}

// eventColumnList is EventColumns as a list, the Returns of every read.
var eventColumnList = []string{"id", "aggregate_id", "aggregate_type", "sequence_no", "event_type", "event_revision", "payload", "metadata", "occurred_at", "partition_key", "global_position"}

var eventStoreStatements = []StatementSpec{
	{ID: StreamVersion, Binds: []string{"aggregate_id"}, Tables: []string{"event_store_table"}, Returns: []string{"sequence_no", "aggregate_type"}},
	{ID: StreamVersions, Optional: true, Binds: StreamVersionsBinds, Tables: []string{"event_store_table"}, Returns: []string{"aggregate_id", "sequence_no", "aggregate_type"}},
	{ID: EventStream, Binds: []string{"aggregate_id", "aggregate_type", "after_sequence"}, Tables: []string{"event_store_table"}, Returns: eventColumnList},
	{ID: EventRange, Binds: []string{"after", "upto", "limit"}, Tables: []string{"event_store_table"}, Returns: eventColumnList},
	{ID: EventPartitionRange, Binds: []string{"partition", "after", "upto", "limit"}, Tables: []string{"event_store_table"}, Returns: eventColumnList},
	{ID: SnapshotInsert, Binds: []string{"id", "aggregate_id", "aggregate_type", "sequence_no", "snapshot_version", "payload", "created_at"}, Tables: []string{"aggregate_snapshots_table"}},
	{ID: SnapshotLatest, Binds: []string{"aggregate_id", "aggregate_type", "snapshot_version"}, Tables: []string{"aggregate_snapshots_table"}, Returns: []string{"sequence_no", "payload", "created_at"}},
}

// EventInsertBinds are the #{names} the event insert (RowInsert) may bind:
// the event columns, sequence_offset (in NextSequence) and expected_version
// (in CheckedSequence). A CounterRow insert binds global_position; a
// SequenceXIDHorizon insert must not (the database draws it).
var EventInsertBinds = []string{"id", "aggregate_id", "aggregate_type", "sequence_no", "sequence_offset", "event_type", "event_revision", "payload", "metadata", "occurred_at", "partition_key", "global_position", "expected_version"}

// eventInsertSpec is the spec of the event insert, checked like a statement
// under the name "event_insert".
var eventInsertSpec = StatementSpec{Binds: EventInsertBinds, Tables: []string{"event_store_table", "event_store_global_position_table"}}
