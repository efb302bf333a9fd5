package dialect

// Position objects: the counter rows or sequences that hand out a topic's
// positions. ${position_table} is the object at hand
// (event_store_global_position_table, event_capture_global_position_table,
// …); the position seam of the core (engine.Positions) is the only caller.
const (
	// PositionSeed (counter) inserts (1, 0) into ${position_table} unless the
	// row exists; never overwrites.
	PositionSeed StatementID = "position.seed"
	// PositionCacheSize (sequence) returns one column, the cache size of
	// sequence ${position_table}.
	PositionCacheSize StatementID = "position.cache_size"
	// PositionFixCache (sequence) sets ${position_table} to CACHE 1. The core
	// runs it only when PositionCacheSize is not 1 (it takes a lock and
	// discards other sessions' cached values).
	PositionFixCache StatementID = "position.fix_cache"
	// PositionLock (counter, required with CounterLockFirst) locks the
	// counter row of ${position_table} without changing its value, e.g.
	// SELECT val … FOR UPDATE or UPDATE … SET val = val. The core runs it
	// before PositionAllocate, in the same transaction.
	PositionLock StatementID = "position.lock"
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
	// CommittedEnd returns one column, the highest position handed out for
	// ${position_table}: for a counter its committed value (a plain,
	// non-locking read), for a sequence its last value (0 before the first).
	// It must never exceed a position some append has drawn: an engine
	// that writes values ahead into the sequence's row (PostgreSQL's
	// nextval, for its WAL) needs the read that takes the row's lock.
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
	// count. When absent, or when the server refuses it (an SQLSTATE error
	// such as 42501), the core uses OldestRunningXID (cluster-wide) from
	// then on.
	OldestHolderXID StatementID = "xid.oldest_holder"
	// EndHorizon (sequence, optional) folds CommittedEnd, CurrentXID and a
	// first OldestRunningXID into one statement returning one row
	// (end, xid, oldest): end as CommittedEnd; xid, NULL unless end >
	// #{mark}, a transaction id assigned strictly after end was read (the
	// claim of the horizon needs that order within the statement, e.g. end
	// from a materialised CTE and the id in a CASE on it); oldest the
	// OldestRunningXID of the statement's own snapshot, which was taken
	// before xid was assigned. Such a snapshot is stale but only ever
	// errs towards waiting: its oldest is at most xid, and equal only when
	// no transaction older than xid was in flight or unseen when it was
	// taken, so the core moves the mark at once when oldest >= xid and runs
	// the horizon check otherwise. When absent the core runs the three.
	EndHorizon StatementID = "xid.end_horizon"
)

var positionTable = []string{"position_table"}

var positionStatements = []StatementSpec{
	{ID: PositionSeed, Strategy: CounterRow, Tables: positionTable},
	{ID: PositionLock, Strategy: CounterRow, Optional: true, Binds: []string{"count"}, Tables: positionTable},
	{ID: PositionAllocate, Strategy: CounterRow, Binds: []string{"count"}, Tables: positionTable, Returns: []string{"val"}},
	{ID: PositionAllocated, Strategy: CounterRow, Optional: true, Binds: []string{"count"}, Tables: positionTable, Returns: []string{"val"}},
	{ID: PositionCacheSize, Strategy: SequenceXIDHorizon, Tables: positionTable, Returns: []string{"cache_size"}},
	{ID: PositionFixCache, Strategy: SequenceXIDHorizon, Tables: positionTable},
	{ID: PositionBeginXID, Strategy: SequenceXIDHorizon, Optional: true},
	{ID: CommittedEnd, Tables: positionTable, Returns: []string{"end"}},
	{ID: CurrentXID, Strategy: SequenceXIDHorizon, Returns: []string{"xid"}},
	{ID: OldestRunningXID, Strategy: SequenceXIDHorizon, Returns: []string{"xid"}},
	{ID: OldestHolderXID, Strategy: SequenceXIDHorizon, Optional: true, Returns: []string{"xid", "database", "since"}},
	{ID: EndHorizon, Strategy: SequenceXIDHorizon, Optional: true, Binds: []string{"mark"}, Tables: positionTable, Returns: []string{"end", "xid", "oldest"}},
}
