package dialect

// Catalogue is everything the core needs to run on one database engine. It is
// plain data (JSON-serialisable) so it crosses the plugin boundary unchanged.
//
// # Templates
//
// Every SQL text in the catalogue is a template:
//
//   - ${name} is an identifier placeholder, named as in the spec
//     (${event_store_table}, ${consumers_table}, ${query_table}, …). The core
//     fills it with a validated table name; it is never a bound parameter.
//     The spec's derived names follow the same rule: idx_${event_store_table}_global
//     becomes idx_EVENT_STORE_global.
//   - #{name} is a bound parameter. The core replaces each occurrence, in
//     order of appearance, with the dialect's placeholder (see
//     Identity.Placeholder) and binds the named value there; a name may occur
//     more than once. The names each statement may use are declared by its
//     StatementSpec (Specs) and checked at load by Validate.
//
// `tidemark schema --format template` prints the ${…} placeholders unfilled,
// which is what a Flyway or Liquibase user feeds to their tool.
type Catalogue struct {
	Identity Identity `json:"identity"`
	// Positions is the position strategy, chosen once at engine.Open for
	// every position object (see PositionSettings for its settings).
	Positions PositionStrategy `json:"positions"`
	// PositionSettings are every setting of the position strategy, in one
	// place: how a counter is locked and read back.
	PositionSettings PositionSettings       `json:"position_settings"`
	Scripts          []Script               `json:"scripts"`
	Statements       map[StatementID]string `json:"statements"`
	// EventInsert is the append statement, assembled by the core as
	// Head + Row + ", " + Row … + Tail for a batch of rows.
	EventInsert RowInsert `json:"event_insert"`
	// CaptureInsert is the capture topic's publish statement, assembled
	// the same way: a row binds CaptureInsertBinds (#{global_position}
	// under CounterRow only); under SequenceXIDHorizon it draws the
	// positions and its Tail returns one row per message, (global_position),
	// in insert order. NextSequence, CheckedSequence and ComputedTail do
	// not apply.
	CaptureInsert RowInsert `json:"capture_insert"`
	// ReadModelInsert is the read-model topics' publish statement, a
	// RowInsert like CaptureInsert: a row binds ReadModelInsertBinds
	// (#{topic_position} under CounterRow only); under SequenceXIDHorizon
	// it draws the positions from the shared sequence and its Tail returns
	// one row per message, (topic_position), in insert order.
	ReadModelInsert RowInsert `json:"read_model_insert"`
	Locks           LockForms `json:"locks"`
	// Isolation is the isolation level the core asks for, per operation,
	// when it begins a transaction of its own.
	Isolation     Isolation        `json:"isolation"`
	Errors        []ErrorRule      `json:"errors"`
	Introspection Introspection    `json:"introspection"`
	QueryColumns  QueryColumnTypes `json:"query_columns"`
	// KeysIgnoreTrailingSpaces says the engine compares key columns with
	// PAD SPACE whatever their collation, so "acc-1 " and "acc-1" would be
	// one key (SQL Server: every collation, the BIN2 ones too). The core then
	// refuses, before any SQL, a key that ends in a space. Engines with a
	// NO PAD binary collation declare it on the key columns instead.
	KeysIgnoreTrailingSpaces bool `json:"keys_ignore_trailing_spaces,omitempty"`
	// Naming says how the engine tells object names apart and which words
	// it refuses as names; the core checks every name against it before
	// any SQL runs.
	Naming Naming `json:"naming"`
	// SchemaLock, when set, serialises schema creation between processes.
	SchemaLock SchemaLock `json:"schema_lock"`
	// Checks are database settings the core's guarantees rely on, read at
	// every start before any DDL (see EngineCheck).
	Checks []EngineCheck `json:"checks,omitempty"`
	// StatementLimit, when its Query is set, reads the most bytes the
	// server accepts in one statement with its values (MariaDB's
	// max_allowed_packet). The engine reads it at Open, and an append
	// larger than it is refused before any SQL, naming Setting.
	StatementLimit StatementLimit `json:"statement_limit,omitempty"`
	// KeyCollation, when its Query is set, finds the key columns of the
	// core's tables that compare text ignoring case (see KeyCollationCheck).
	KeyCollation KeyCollationCheck `json:"key_collation,omitempty"`

	// Facts are what the engine stores, declared by the dialect so the
	// core never guesses them; read by the query-table check and the
	// conformance suite.
	Facts EngineFacts `json:"facts"`
}

// KeyCollationCheck finds key columns whose collation would merge keys
// that differ only in case ("src" and "Src" one checkpoint), on an engine
// whose collation is a column's property that an operator can change
// after the core's DDL set it (ALTER TABLE … CONVERT TO … _ci), or that a
// table made before the core's DDL already has. The core runs Query at
// every Open, once the schema is made or verified, and refuses to start
// when a returned row names one of its tables.
type KeyCollationCheck struct {
	// Query has no binds and returns (table, column, collation), one row
	// per indexed text column of the current database or schema that
	// compares ignoring case; no row when every key compares exactly.
	Query string `json:"query"`
	// Remedy is what an operator does, e.g. the statement that converts
	// a column back to a binary collation.
	Remedy string `json:"remedy"`
}

// StatementLimit is a server setting that bounds one statement's size.
type StatementLimit struct {
	Setting string `json:"setting"` // e.g. "max_allowed_packet"
	Query   string `json:"query"`   // one row, one integer column (bytes); no binds
}

// Naming is how the engine compares the names of schema objects. Identity's
// FoldsUnquotedTo says how a name is stored; this says when two names are
// one object (SQLite stores names as written but compares them ignoring
// case; MariaDB on Linux tells tables apart by case but not indexes). The
// zero value is the strictest reading: case ignored everywhere, index names
// sharing one namespace with the tables. The conformance suite checks each
// claim on the real engine (schema/naming_rules_declared).
type Naming struct {
	// TablesCaseSensitive is true when two table (or sequence) names that
	// differ only in case are two objects (MariaDB and MySQL on Linux with
	// lower_case_table_names=0).
	TablesCaseSensitive bool `json:"tables_case_sensitive,omitempty"`
	// IndexesCaseSensitive is the same for index and constraint names.
	IndexesCaseSensitive bool `json:"indexes_case_sensitive,omitempty"`
	// IndexScope is where an index or constraint name must be unique.
	IndexScope IndexScope `json:"index_scope,omitempty"`
	// ReservedWords are the words the engine refuses as an unquoted table
	// or column name, in any case. The core refuses such a name before any
	// SQL runs instead of quoting it (quoting would change the case of the
	// names PostgreSQL stores). Take them from the engine itself where it
	// can list them (PostgreSQL: pg_get_keywords() with catcode 'R' or 'T').
	ReservedWords []string `json:"reserved_words,omitempty"`
	// Shorten is the rule the core applies to a derived name (an index or
	// constraint named around a table, idx_${event_store_table}_global,
	// idx_${query_table}_${column}) that is longer than
	// Identity.MaxIdentifierLength. Empty refuses such a name before any
	// SQL runs (NameTooLongError), as on every built-in dialect, whose
	// limits (63 and more) fit the spec's names. Table and sequence names
	// are never shortened: one over the limit is always refused.
	Shorten ShortenRule `json:"shorten,omitempty"`
}

// ShortenRule is how the core shortens a derived name over the engine's
// identifier limit. The core applies it in one place (package schema) to
// the DDL, the naming plan's collision check, the index guards, the
// introspection checks and every export, so all of them see one name.
type ShortenRule string

// Shorten rules.
const (
	// ShortenNever (the default) refuses a derived name over the limit.
	ShortenNever ShortenRule = ""
	// ShortenHash keeps a derived name that fits as it is (the spec's
	// name) and turns one of more than L = MaxIdentifierLength characters
	// into its first L-9 characters, "_", and the first 8 hexadecimal
	// digits (lower case) of the SHA-256 of the whole name as the engine
	// stores it (folded as Identity.FoldsUnquotedTo says, so two spellings
	// of one table give one name). With Firebird's 31 characters,
	// idx_READ_MODEL_CAPTURE_RECORDS_partition (40) becomes
	// idx_READ_MODEL_CAPTURE_ plus "_" and 8 hex digits. The start of the
	// name survives, so an error rule's ConstraintPattern anchored at the
	// start (^pk_) still matches; one anchored at the end does not. Two
	// derived names that shorten to one are refused by the naming plan
	// (NameConflictError) before any SQL runs. Needs a limit of at least 18.
	ShortenHash ShortenRule = "prefix_sha256_8"
)

// IndexScope is the namespace of index and constraint names.
type IndexScope string

// Index scopes.
const (
	// IndexScopeRelations (the default): index names share one namespace
	// with table and sequence names in the schema (PostgreSQL's pg_class,
	// SQLite's sqlite_master).
	IndexScopeRelations IndexScope = ""
	// IndexScopeSchema: index names are unique in the schema, apart from
	// table names (H2, HSQLDB).
	IndexScopeSchema IndexScope = "schema"
	// IndexScopeTable: index names are unique per table (MySQL, MariaDB,
	// SQL Server).
	IndexScopeTable IndexScope = "table"
)

// SchemaLock is a named lock the core holds on one connection for the whole
// of schema creation and seeding, so that processes starting at once on an
// empty database create it one after the other. Both statements bind
// #{name}; Acquire waits until the lock is free and returns one row, whose
// value (when not NULL) is 1 or true once the lock is held (MariaDB's
// GET_LOCK returns 0 when it gave up waiting). Release frees it on the same
// connection. Engines without a named lock leave both empty: the core then
// treats a concurrent "already exists" (ErrDuplicateObject) as done and
// verifies the schema afterwards.
type SchemaLock struct {
	Acquire string `json:"acquire,omitempty"` // e.g. SELECT pg_advisory_lock(hashtextextended(#{name}, 0))
	Release string `json:"release,omitempty"` // e.g. SELECT pg_advisory_unlock(hashtextextended(#{name}, 0))
}

// Identity names the dialect and how to talk to its database.
type Identity struct {
	Name            string `json:"name"`             // e.g. "postgres"
	Version         string `json:"version"`          // the plugin's own version
	ContractVersion int    `json:"contract_version"` // ContractVersion the plugin was built with
	ServerVersions  string `json:"server_versions"`  // human-readable, e.g. "PostgreSQL 13+"
	// DriverName is the database/sql driver name the plugin was written
	// against (e.g. "pgx"); the user may bring another driver for the same
	// engine. The core imports no driver.
	DriverName string `json:"driver_name"`
	// Drivers are the other database/sql driver names known to work with
	// the catalogue (PostgreSQL: pgx and lib/pq's "postgres"), each proven
	// by a conformance matrix row. `tidemark conformance` opens the
	// database with the first of DriverName and Drivers its binary links
	// (PickDriver) and says so when it links none.
	Drivers []string `json:"drivers,omitempty"`
	DSNHint string   `json:"dsn_hint"` // an example DSN for that driver
	// DSNParams are the query parameters of DriverName's DSN a guarantee
	// relies on (SQLite: a busy timeout and BEGIN IMMEDIATE, without which
	// concurrent writers fail with SQLITE_BUSY at once). ApplyDSNParams
	// adds those a DSN lacks; the CLI applies them to every DSN it opens.
	DSNParams []DSNParam `json:"dsn_params,omitempty"`
	// Placeholder is the bind-parameter style of the driver.
	Placeholder PlaceholderStyle `json:"placeholder"`
	QuoteOpen   string           `json:"quote_open"`  // identifier quote, e.g. `"`
	QuoteClose  string           `json:"quote_close"` // e.g. `"`
	// MaxIdentifierLength is the engine's longest identifier in characters;
	// every derived name (index, constraint) must fit, never truncated.
	MaxIdentifierLength int `json:"max_identifier_length"`
	// MaxBindParameters is the most bind parameters one statement may carry
	// (SQL Server: 2100); 0 means no limit the core needs to respect below
	// its own chunking. Multi-row inserts are split to stay under it.
	MaxBindParameters int `json:"max_bind_parameters,omitempty"`
	// Embedded is true when the database runs inside the host process
	// (SQLite): there is no server or network to lose. The conformance
	// suite skips its connection-loss tests by it, not by dialect name.
	Embedded bool `json:"embedded,omitempty"`
	// FoldsUnquotedTo tells how the engine stores unquoted identifiers in its
	// catalogue: "lower" (PostgreSQL), "upper" (H2, HSQLDB) or "" (as written).
	FoldsUnquotedTo string `json:"folds_unquoted_to"`
	// StatementTerminator ends each statement in exported scripts that a
	// migration tool splits into statements itself (Flyway, Liquibase's
	// endDelimiter, the plain sql file). ";" where no statement holds a
	// procedural body; a dialect whose statements contain ";" inside a body
	// declares what its tools split on instead (e.g. "\n/" for Oracle
	// PL/SQL blocks). Empty means ";".
	StatementTerminator string `json:"statement_terminator,omitempty"`
}

// PickDriver returns the database/sql driver to open the engine with,
// among registered (what sql.Drivers() lists in this process): DriverName
// when it is registered, else the first of Drivers that is. ok is false
// when none is: the program must import one of them.
func (id Identity) PickDriver(registered []string) (driver string, ok bool) {
	have := make(map[string]bool, len(registered))
	for _, r := range registered {
		have[r] = true
	}
	for _, d := range append([]string{id.DriverName}, id.Drivers...) {
		if d != "" && have[d] {
			return d, true
		}
	}
	return "", false
}

// Terminator is Identity.StatementTerminator, ";" when unset.
func (id Identity) Terminator() string {
	if id.StatementTerminator == "" {
		return ";"
	}
	return id.StatementTerminator
}

// PlaceholderStyle is the bind-parameter syntax of a driver.
type PlaceholderStyle string

// Placeholder styles.
const (
	PlaceholderQuestion PlaceholderStyle = "question" // ?
	PlaceholderDollar   PlaceholderStyle = "dollar"   // $1, $2, …
	PlaceholderAtP      PlaceholderStyle = "at_p"     // @p1, @p2, …
	PlaceholderColon    PlaceholderStyle = "colon"    // :1, :2, …
)

// PositionStrategy is how global positions are handed out and how the
// high-water mark finds the committed end.
type PositionStrategy string

const (
	// SequenceXIDHorizon (PostgreSQL): the appending transaction takes its
	// transaction id before drawing positions from a CACHE 1 sequence. The
	// mark records the sequence's last value as pending_end with a
	// transaction id taken right after as pending_horizon, and moves to
	// pending_end once no transaction older than the horizon is in flight.
	SequenceXIDHorizon PositionStrategy = "SEQUENCE_XID_HORIZON"
	// CounterRow (every other engine): a single-row counter incremented and
	// held locked by the append until it commits, restored by rollback, so
	// positions are gapless and commit-ordered; the mark follows the
	// committed counter.
	CounterRow PositionStrategy = "COUNTER_ROW"
)

// PositionSettings gathers the settings of the position strategy. The
// core's position seam (engine.Positions) is the only reader.
type PositionSettings struct {
	// CounterLock is how a CounterRow append takes the counter row.
	CounterLock CounterLock `json:"counter_lock,omitempty"`
	// AllocateFirst makes a CounterRow append take the counter before it
	// reads anything (the stream versions), instead of as late as possible:
	// for engines where a reader of the event table can deadlock with the
	// counter's holder inserting into it (HSQLDB). (Contract 2:
	// locks.counter_first.)
	AllocateFirst bool `json:"allocate_first,omitempty"`
	// AllocatedInResult, for CounterRow, says the driver reports the value
	// PositionAllocate set as the statement result's LastInsertId (MySQL's
	// LAST_INSERT_ID(expr)), so the core reads it without another round trip
	// inside the locked section; PositionAllocated remains the fallback.
	AllocatedInResult bool `json:"allocated_in_result,omitempty"`
}

// CounterLock is how a CounterRow append locks the counter row.
type CounterLock string

// Counter lock forms.
const (
	// CounterLockUpdate (the default): PositionAllocate's UPDATE is the lock;
	// a concurrent append waits on it and then adds to the committed value
	// (every first-committer or locking engine: MySQL, H2, SQL Server, …).
	CounterLockUpdate CounterLock = ""
	// CounterLockFirst: PositionLock takes the row lock first, then
	// PositionAllocate adds. For first-updater-wins engines (Firebird),
	// where an UPDATE that waited for a holder who then committed fails with
	// an update conflict: the lock statement is the one that waits.
	CounterLockFirst CounterLock = "lock_first"
)

// IsolationLevel is a transaction isolation level the core asks the driver
// for (database/sql's TxOptions). Empty is the driver's default.
type IsolationLevel string

// Isolation levels.
const (
	IsolationDefault         IsolationLevel = ""
	IsolationReadUncommitted IsolationLevel = "read_uncommitted"
	IsolationReadCommitted   IsolationLevel = "read_committed"
	IsolationRepeatableRead  IsolationLevel = "repeatable_read"
	IsolationSnapshot        IsolationLevel = "snapshot"
	IsolationSerializable    IsolationLevel = "serializable"
)

// Isolation is the isolation level per operation of the core. Each applies
// to the transactions the core begins itself (not to a caller's *sql.Tx,
// as in AppendTx). Empty levels leave the driver's default, which is what
// every built-in relies on today; a dialect whose counter or horizon is
// right only at one level declares it (Firebird: read_committed, where the
// default SNAPSHOT makes every counter retry conflict again).
type Isolation struct {
	// Append is the level of an append's own transaction.
	Append IsolationLevel `json:"append,omitempty"`
	// HWM is the level of the high-water-mark advancer's transactions.
	HWM IsolationLevel `json:"hwm,omitempty"`
	// Read is the level of read transactions the core begins (reads that
	// must see one snapshot across several statements).
	Read IsolationLevel `json:"read,omitempty"`
	// ReadWriteReads: begin the core's read transactions read-write. For a
	// driver whose read-only transactions leak into later statements on the
	// connection (github.com/nakagami/firebirdsql keeps the last
	// transaction's parameters for its autocommit statements, so the next
	// write on that connection fails "attempted update during read-only
	// transaction"). The reads stay one transaction on one connection.
	ReadWriteReads bool `json:"read_write_reads,omitempty"`
}

// Area groups scripts the way the spec's modules do; each area has its own
// table prefix and its own schema switch.
type Area string

// The areas.
const (
	AreaEventSourcing Area = "eventsourcing" // event tables, snapshots, EVENT_STORE_GLOBAL_POSITION
	AreaPartitioning  Area = "partitioning"  // PARTITION_METADATA
	AreaMessaging     Area = "messaging"     // capture topic, HWM, compaction, consumers, partitions
	AreaCQRS          Area = "cqrs"          // read-model topics, epochs, query tables
	AreaSaga          Area = "saga"          // saga instances, deadlines, deadline locks
	AreaPublication   Area = "publication"   // EVENT_PUBLICATION_METADATA (no prefix)
)

// Script is one of the spec's schema scripts for this dialect.
type Script struct {
	Area Area `json:"area"`
	// Name is the spec's script file name, e.g. "event-store-schema.sql".
	Name string `json:"name"`
	// PerTable names the placeholder the script is instantiated once per
	// table for ("event_store_table", "aggregate_snapshots_table",
	// "saga_instances_table", "query_table"); empty for a script run once.
	PerTable string `json:"per_table,omitempty"`
	// Objects lists, in creation order, the placeholders of the objects the
	// script creates (tables and sequences), so the core can verify them
	// when schema creation is switched off.
	Objects []Object `json:"objects"`
	// Statements are the DDL templates in execution order. Each must be
	// idempotent: a second run raises nothing and changes nothing.
	Statements []string `json:"statements"`
}

// Object is a schema object a script creates.
type Object struct {
	Placeholder string     `json:"placeholder"` // e.g. "consumers_table"
	Kind        ObjectKind `json:"kind"`
}

// ObjectKind is a table or a sequence.
type ObjectKind string

// Object kinds.
const (
	ObjectTable    ObjectKind = "table"
	ObjectSequence ObjectKind = "sequence"
)

// RowInsert is a multi-row INSERT assembled by the core (engine.Insert).
//
// Under SequenceXIDHorizon the database draws the positions in the insert:
// Row must not bind #{global_position} and the statement returns one row
// per inserted event, (global_position, sequence_no), in insert order.
// Under CounterRow the core binds #{global_position} and reads no rows.
// (Contract 2 said so with returns_positions.)
type RowInsert struct {
	Head string `json:"head"` // "INSERT INTO ${event_store_table} (…) VALUES "
	Row  string `json:"row"`  // "(#{id}, #{aggregate_id}, …)"
	Tail string `json:"tail"` // e.g. " RETURNING global_position", or ""
	// MaxRows is the most rows one statement may carry; 0 means no limit
	// besides the core's own (500) and Identity.MaxBindParameters. 1 is the
	// single-row mode, for engines without multi-row VALUES (Firebird 3).
	MaxRows int `json:"max_rows,omitempty"`
	// NextSequence, optional, is an SQL expression the core puts in place of
	// #{sequence_no} when appending with no expected version: the stream's
	// next sequence number computed by the database in the same statement,
	// binding #{aggregate_id} and #{sequence_offset} (1 for the first event).
	// Both expressions read the stream of #{aggregate_type} only (an id
	// another type holds in a shared table is not this stream).
	// Where the insert draws positions it lets a single-stream append be one
	// autocommit statement: no transaction round trips, no version read.
	NextSequence string `json:"next_sequence,omitempty"`
	// CheckedSequence, optional, is an SQL expression the core puts in place
	// of the first event's #{sequence_no} when appending with an exact
	// expected version: it yields #{sequence_no} when the stream's version
	// (-1 for none) is #{expected_version}, and NULL otherwise, so the NOT
	// NULL constraint refuses the insert (an ErrNotNullViolation rule must
	// classify it) and the core reports a conflict with the actual version.
	// Where the insert draws positions an exact-version append is then one
	// statement.
	CheckedSequence string `json:"checked_sequence,omitempty"`
	// ComputedTail, optional, lets a CounterRow insert compute the
	// sequence number of a single-event append with no expected version
	// and return it: it replaces Tail in an insert whose #{sequence_no} is
	// NextSequence, and makes the statement return one row per inserted
	// event, (global_position, sequence_no), in insert order (MariaDB 10.5+:
	// " RETURNING global_position, sequence_no"; MySQL 8 has no
	// INSERT … RETURNING and leaves it empty). Such an append then reads no
	// version: BEGIN, the counter, the insert, COMMIT. NextSequence is
	// required with it; under SequenceXIDHorizon Tail already returns the
	// rows and it must be empty. The dialect must accept NextSequence's
	// subquery on the insert's own table (MySQL 8 refuses it: error 1093).
	ComputedTail string `json:"computed_tail,omitempty"`
}

// LockForms describes how the engine locks and what it lacks.
type LockForms struct {
	// ForUpdate is appended to a SELECT to lock its rows, e.g. " FOR UPDATE":
	// the rows stay locked until the transaction ends, and another
	// transaction's SELECT … ForUpdate of them waits (conformance
	// locks/for_update_blocks shows the wait end in a lock timeout, and the
	// row taken once the holder commits). Empty where the engine has no
	// such suffix: SQLite locks the whole database for a writer, HSQLDB's
	// MVCC FOR UPDATE does not block another FOR UPDATE, SQL Server locks
	// with table hints. The durable consumers and partition leases to come
	// lock their rows with it.
	ForUpdate string `json:"for_update"`
	// SkipLocked is true when ForUpdate + " SKIP LOCKED" returns the rows no
	// other transaction holds and passes over the held ones without waiting
	// (conformance locks/skip_locked_skips).
	SkipLocked bool `json:"skip_locked"`
	// Now is the SQL expression for the database clock, stored form: UTC
	// where the result has no zone, whatever the session's time zone. Read
	// twice in one transaction it never goes back (conformance
	// clock/now_utc, which reads it on a session set 5 h 45 min east of
	// UTC).
	Now string `json:"now"`
	// SerializesWriters is true when the engine allows one writing
	// transaction at a time (SQLite). The core then queues its own appends
	// on one in-process mutex per store, so they never meet in the engine's
	// busy handler. It takes no database lock itself: that a transaction
	// holds the write lock from BEGIN (so writers of other processes queue
	// instead of failing with a stale snapshot) is the driver's, set in the
	// DSN the dialect's DSNHint shows (modernc.org/sqlite: _txlock=immediate;
	// engine tests prove both sides). Contract 2 also had begin_write, a
	// BEGIN statement no code ran: removed.
	SerializesWriters bool `json:"serializes_writers"`
	// ReadersWaitForWriters is true on a locking engine (HSQLDB in LOCKS
	// transaction control): a read of rows another transaction wrote or
	// holds waits until that transaction ends, where an MVCC engine reads
	// the last committed version at once. Such an engine must declare
	// ConflictRead in_transaction (Validate), and the suite adapts the
	// expectations that assume MVCC (a reader never waits for a writer).
	ReadersWaitForWriters bool `json:"readers_wait_for_writers"`
	// SessionLockTimeout, optional, is a statement that bounds the lock
	// waits of the session it runs on to at most about a second, for tests
	// that show a wait ending (the conformance suite's errors/lock_timeout,
	// locks/* and lease takeovers). The core never runs it. Empty: the
	// suite tries the forms it knows (PostgreSQL's and H2's lock_timeout,
	// MySQL's innodb_lock_wait_timeout, SQL Server's LOCK_TIMEOUT, SQLite's
	// busy_timeout) and skips those tests when the engine takes none.
	SessionLockTimeout string `json:"session_lock_timeout,omitempty"`
	// ConflictRead is where the core reads a stream's version after the
	// engine refused an append's insert (the Actual of a ConcurrencyError,
	// the owner of an AggregateIDTakenError). Empty is ConflictReadPool.
	ConflictRead ConflictRead `json:"conflict_read"`
}

// ConflictRead is where a refused append's stream version is read.
type ConflictRead string

// Where a refused append's stream version is read.
const (
	// ConflictReadPool reads on another connection of the pool, from
	// committed state, while the refused transaction may still be open:
	// right on an MVCC engine, whose read waits for no writer, and whose
	// failed transaction may be unusable (PostgreSQL aborts it) or read an
	// older snapshot (REPEATABLE READ).
	ConflictReadPool ConflictRead = "pool"
	// ConflictReadInTransaction reads in the refused transaction itself,
	// where it has one (an autocommit insert has none: the pool then): for
	// an engine that keeps a transaction usable after a failed statement
	// and whose read there sees the committed conflicting row. A locking
	// engine needs it: a read on another connection waits for the locks of
	// its own caller's transaction.
	ConflictReadInTransaction ConflictRead = "in_transaction"
)

// ErrorClass is the core's classification of a database error.
type ErrorClass string

// Error classes.
const (
	ErrUniqueViolation ErrorClass = "unique_violation"
	// ErrDuplicateEventID is a unique violation of an event table's primary
	// key (the event id), told apart from a sequence conflict by the rule's
	// message or constraint pattern.
	ErrDuplicateEventID    ErrorClass = "duplicate_event_id"
	ErrForeignKeyViolation ErrorClass = "foreign_key_violation"
	// ErrNotNullViolation is a NOT NULL constraint refusing a row (the
	// signal of RowInsert.CheckedSequence).
	ErrNotNullViolation     ErrorClass = "not_null_violation"
	ErrDeadlock             ErrorClass = "deadlock"
	ErrLockTimeout          ErrorClass = "lock_timeout"
	ErrSerializationFailure ErrorClass = "serialization_failure"
	ErrUndefinedTable       ErrorClass = "undefined_table"
	ErrConnectionLost       ErrorClass = "connection_lost"
	ErrQueryCanceled        ErrorClass = "query_canceled"
	// ErrReadOnly is a write refused because the transaction, the session
	// or the server is read-only: SQLSTATE 25006 (PostgreSQL, HSQLDB; also a
	// hot standby), MySQL/MariaDB 1792 (READ ONLY transaction) and 1290
	// with --read-only, H2 90097, SQLite SQLITE_READONLY.
	ErrReadOnly ErrorClass = "read_only"
	// ErrStatementInvalidated is a prepared statement the engine no longer
	// runs because an object it uses was dropped or altered after it was
	// prepared (HSQLDB 07502 "statement is invalid"; the statement did not
	// run). The engine then drops it from its prepared-statement cache and
	// runs the statement once more, freshly prepared: after a table is
	// recreated (a query-table rebuild) it works again, and while the table
	// is missing the caller gets the engine's undefined-table error.
	ErrStatementInvalidated ErrorClass = "statement_invalidated"
	// ErrDuplicateObject is a CREATE refused because the object exists: on
	// engines without a SchemaLock, a concurrent creation of the same
	// schema, which the core treats as done.
	ErrDuplicateObject ErrorClass = "duplicate_object"
)

// ErrorRule maps what a driver error carries to an ErrorClass. Every
// non-empty field must match; rules are tried in order and the first match
// wins. The core extracts SQLSTATE, vendor codes, the constraint name and the
// message from driver errors itself, importing no driver (see package
// core/sqlerr for what it reads: SQLState() / VendorCode() methods, exported
// code fields, constraint fields and message shapes).
type ErrorRule struct {
	Class    ErrorClass `json:"class"`
	SQLState string     `json:"sqlstate,omitempty"` // exact, e.g. "23505"; a trailing '*' matches a prefix ("08*")
	// VendorCode must be one of the vendor codes the error carries (e.g.
	// 1062 on MySQL; any code of a status vector such as Firebird's GDS codes).
	VendorCode int64 `json:"vendor_code,omitempty"`
	// MessagePattern is a Go regular expression matched against the error text.
	MessagePattern string `json:"message_pattern,omitempty"`
	// ConstraintPattern, when set, is a Go regular expression that must match
	// the violated constraint's (or unique index's) NAME, not the message:
	// read from the driver's field (pgconn ConstraintName, lib/pq
	// Constraint) or, where the driver has none, cut out of the message
	// (MySQL "for key 'X'", H2 "violation: "X ON …", HSQLDB "; X table:",
	// SQL Server "constraint 'X'", SQLite "constraint failed: T.col").
	// A rule with a pattern never matches an error with no name. Used to
	// tell a duplicate event id (the primary key) from a sequence conflict.
	ConstraintPattern string `json:"constraint_pattern,omitempty"`
	// ConstraintFromMessage, when set, is a Go regular expression with one
	// group that cuts the violated constraint's name out of the message for
	// this rule's ConstraintPattern, for an engine whose driver carries no
	// constraint field and whose message the core's built-in shapes do not
	// know. A name from the driver's own field still wins.
	ConstraintFromMessage string `json:"constraint_from_message,omitempty"`
}

// Introspection holds catalogue queries. Each returns rows as documented.
type Introspection struct {
	// TableExists: binds #{table} (as stored in the catalogue, see
	// Identity.FoldsUnquotedTo); returns one row when the table exists.
	TableExists string `json:"table_exists"`
	// SequenceExists: binds #{sequence}; one row when it exists. Empty where
	// the dialect has no sequences.
	SequenceExists string `json:"sequence_exists,omitempty"`
	// Columns: binds #{table}; returns (column_name, data_type,
	// char_length, numeric_precision, numeric_scale, nullable) per column,
	// with data_type in upper case and the lengths NULL where they do not apply.
	Columns string `json:"columns"`
	// Indexes: binds #{table}; returns (index_name, column_name, is_unique,
	// ordinal) per index column, primary keys and unique constraints included.
	Indexes string `json:"indexes"`
}

// QueryFieldKind is the kind of a query-table column.
type QueryFieldKind string

// Query-field kinds and their variants.
const (
	KindText    QueryFieldKind = "TEXT"
	KindInteger QueryFieldKind = "NUMBER_INTEGRAL"
	KindDecimal QueryFieldKind = "NUMBER_DECIMAL" // with precision and scale
	KindDate    QueryFieldKind = "TEMPORAL_DATE"
	KindTime    QueryFieldKind = "TEMPORAL_TIME"
	KindInstant QueryFieldKind = "TEMPORAL_INSTANT"
	KindBoolean QueryFieldKind = "BOOLEAN"
)

// QueryColumnTypes maps query-field kinds to column types and index DDL.
type QueryColumnTypes struct {
	// Types maps a kind to its column type; the KindDecimal entry contains
	// ${precision} and ${scale}.
	Types map[QueryFieldKind]string `json:"types"`
	// Column is the template of one column definition: ${column} ${type}.
	Column string `json:"column"`
	// Index and UniqueIndex create idx_${query_table}_${column}. Where the
	// engine has CREATE INDEX IF NOT EXISTS they use it; otherwise
	// IndexExists guards them.
	Index       string `json:"index"`
	UniqueIndex string `json:"unique_index"`
	// IndexExists, when set, binds #{table} and #{index} and returns a row
	// when the index exists; the core then skips creating it.
	IndexExists string `json:"index_exists,omitempty"`
}

// EngineCheck is a database setting a guarantee relies on, which the dialect
// cannot set in its DDL for every user (it needs rights a schema owner lacks,
// or it applies database-wide). The core reads it at every start, before any
// DDL: when Query's single value is not Want it runs Fix (if any), reads
// again, and otherwise refuses to start with an error naming the setting,
// both values and Remedy. HSQLDB's sql.pad_space is the first: with PAD SPACE
// "acc-1 " and "acc-1" are one key.
type EngineCheck struct {
	Name   string `json:"name"`          // e.g. "exact key comparison (sql.pad_space)"
	Query  string `json:"query"`         // one row, one column; no binds
	Want   string `json:"want"`          // compared with the value as text, case-insensitively
	Fix    string `json:"fix,omitempty"` // e.g. SET DATABASE COLLATION SQL_TEXT NO PAD; needs rights
	Remedy string `json:"remedy"`        // what an operator does when Fix is refused
}
