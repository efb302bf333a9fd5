package dialect

// StatementID names a statement of the catalogue. The doc comment of each ID
// is its contract: the ${…} identifiers it may use, the #{…} parameters the
// core binds, and the rows it must return. Statements marked "sequence" are
// required only for SequenceXIDHorizon, "counter" only for CounterRow.
type StatementID string

// Seeds and checks run at every start, whatever the schema switch.
const (
	// PartitionSeed inserts (id 1, #{partitions}) into
	// ${partition_metadata_table} unless a row exists; never overwrites.
	PartitionSeed StatementID = "partition.seed"
	// PartitionRead returns the single column partitions of row id 1.
	PartitionRead StatementID = "partition.read"
	// PositionSeed (counter) inserts (1, 0) into ${position_table} unless the
	// row exists; never overwrites. ${position_table} is the counter of the
	// topic at hand (event_store_global_position_table, …).
	PositionSeed StatementID = "position.seed"
	// PositionCacheSize (sequence) returns one column, the cache size of
	// sequence ${position_table}.
	PositionCacheSize StatementID = "position.cache_size"
	// PositionFixCache (sequence) sets ${position_table} to CACHE 1. The core
	// runs it only when PositionCacheSize is not 1 (it takes a lock and
	// discards other sessions' cached values).
	PositionFixCache StatementID = "position.fix_cache"
)

// Appends.
const (
	// PositionAllocate (counter) adds #{count} to the counter row of
	// ${position_table} and holds it locked until the transaction ends. If it
	// returns a row, its single column is the new value; otherwise the core
	// runs PositionAllocated next, in the same transaction.
	PositionAllocate StatementID = "position.allocate"
	// PositionAllocated (counter) returns the counter value this transaction
	// just set. Empty when PositionAllocate returns it.
	PositionAllocated StatementID = "position.allocated"
	// PositionBeginXID (sequence) assigns the transaction its id before any
	// position is drawn; returns nothing useful. May be empty when the
	// EventInsert row itself forces the id first (the PostgreSQL fold).
	PositionBeginXID StatementID = "position.begin_xid"
	// StreamVersion returns (sequence_no, aggregate_type) of the row of
	// aggregate #{aggregate_id} in ${event_store_table} with the highest
	// sequence_no, and no row when there is none. The core compares the type
	// with its own: an id another type holds in a shared table is not this
	// type's stream (its version is -1) and cannot be appended to.
	StreamVersion StatementID = "event.stream_version"
)

// Reads. Every read returns the event columns in this order:
// id, aggregate_id, aggregate_type, sequence_no, event_type, event_revision,
// payload, metadata, occurred_at, partition_key, global_position.
const (
	// EventStream reads aggregate #{aggregate_id} of ${event_store_table}
	// with sequence_no > #{after_sequence}, in sequence order.
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
	// snapshot of #{aggregate_id}, #{aggregate_type}, #{snapshot_version};
	// no row when there is none.
	SnapshotLatest StatementID = "snapshot.latest"
)

// The high-water mark, on ${high_water_mark_store_table}. Lease statements
// compute expiry on the database clock from #{lease_millis}.
const (
	// HWMSeed inserts the row of #{topic} at mark 0 unless it exists.
	HWMSeed StatementID = "hwm.seed"
	// HWMRead returns (high_water_mark, pending_end, pending_horizon,
	// lease_owner) of #{topic}.
	HWMRead StatementID = "hwm.read"
	// HWMAcquire takes or renews the lease of #{topic} for #{owner} when it
	// is free, already #{owner}'s, or expired; the core reads the affected
	// row count (1 = held).
	HWMAcquire StatementID = "hwm.acquire"
	// HWMRelease frees the lease of #{topic} if #{owner} holds it.
	HWMRelease StatementID = "hwm.release"
	// HWMAdvance sets high_water_mark = #{mark} and clears pending_end and
	// pending_horizon for #{topic} only while #{owner} holds an unexpired
	// lease and the mark is below #{mark}.
	HWMAdvance StatementID = "hwm.advance"
	// HWMSetPending (sequence) records #{pending_end} and #{pending_horizon}
	// for #{topic} while #{owner} holds an unexpired lease.
	HWMSetPending StatementID = "hwm.set_pending"
	// HWMClearPending (sequence) clears pending_end and pending_horizon of
	// #{topic} while #{owner} holds an unexpired lease.
	HWMClearPending StatementID = "hwm.clear_pending"
	// CommittedEnd returns one column, the highest position handed out for
	// ${position_table}: for a counter its committed value (a plain,
	// non-locking read), for a sequence its last value (0 before the first).
	CommittedEnd StatementID = "position.committed_end"
	// CurrentXID (sequence) assigns and returns the transaction id as BIGINT.
	CurrentXID StatementID = "xid.current"
	// OldestRunningXID (sequence) returns, as BIGINT, the oldest transaction
	// id still in flight (the xmin of a fresh snapshot).
	OldestRunningXID StatementID = "xid.oldest_running"
	// OldestHolderXID (sequence, optional) is OldestRunningXID for this
	// database alone: it returns one row (xid BIGINT, database, since) where
	// xid is the oldest transaction id still in flight that is NOT known to
	// belong to another database of the cluster (when there is none, a value
	// above every completed id: the snapshot's xmax), database its database
	// and since the time it began (or was prepared), each NULL when unknown.
	// Only a transaction of this database can draw a position of its
	// sequence, so a transaction may be left out only when the server
	// positively places it in another database; one it cannot place must
	// count. When absent,
	// or when the server refuses it (an SQLSTATE error such as 42501), the
	// core uses OldestRunningXID (cluster-wide) from then on.
	OldestHolderXID StatementID = "xid.oldest_holder"
	// HWMNotify, optional, tells other processes the mark of #{topic} moved
	// (e.g. pg_notify). Run after the advancing transaction commits.
	HWMNotify StatementID = "hwm.notify"
	// DatabaseNow returns one column, the database clock (for diagnostics
	// and lease tests).
	DatabaseNow StatementID = "clock.now"
)

// RequiredStatements lists the statements every catalogue must carry for
// the given strategy; the conformance suite and the loader check it.
func RequiredStatements(s PositionStrategy) []StatementID {
	ids := []StatementID{
		PartitionSeed, PartitionRead, StreamVersion,
		EventStream, EventRange, EventPartitionRange,
		SnapshotInsert, SnapshotLatest,
		HWMSeed, HWMRead, HWMAcquire, HWMRelease, HWMAdvance,
		CommittedEnd, DatabaseNow,
	}
	switch s {
	case SequenceXIDHorizon:
		ids = append(ids, PositionCacheSize, PositionFixCache, HWMSetPending,
			HWMClearPending, CurrentXID, OldestRunningXID)
	case CounterRow:
		ids = append(ids, PositionSeed, PositionAllocate)
	}
	return ids
}
