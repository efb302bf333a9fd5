// Package engine binds a dialect's catalogue to a database: it resolves and
// validates table names, creates or verifies the schema, seeds the rows the
// core owns, and compiles (and prepares) every statement once, so the hot
// path runs plain SQL with no plugin call.
package engine

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/schema"
	"github.com/tidemarkdb/tidemark/core/sqlerr"
)

// DefaultPartitions is the partition count used when Config.Partitions is 0.
const DefaultPartitions = 16

// EventStoreTopic is the high-water-mark row of the event store.
const EventStoreTopic = "event-store"

// Config configures an Engine.
type Config struct {
	// Names configures prefixes, overrides and per-aggregate tables.
	Names schema.Config
	// Modes is the schema switch per area; a missing area means Always.
	Modes map[dialect.Area]schema.Mode
	// QueryTables are created (or checked) with the cqrs area.
	QueryTables []schema.QueryTable
	// Partitions is the fixed partition count N (default 16). It is seeded
	// on first start and verified on every later one.
	Partitions int
	// ReadOnly opens the engine for reading only (a replica, a read-only
	// account): Open runs no DDL and no seed, it verifies that the schema,
	// the partition count and the event store's mark row exist
	// (*SchemaMissingError otherwise) and adopts the persisted partition
	// count when Partitions is 0. Every write through the engine (Append,
	// AppendTx, Publish, an advancer's cycle, Exec) is then refused with a
	// *ReadOnlyError before any SQL runs.
	ReadOnly bool
	// Existing opens only a schema an earlier Open created: Open runs no
	// DDL, no seed and no setting fix, and verifies what ReadOnly verifies
	// (*SchemaMissingError when anything is missing), but the engine then
	// writes as usual. It is for tools that act on existing rows (the
	// operator CLI), so a mistyped DSN never builds a schema.
	Existing bool
}

// Engine is a catalogue bound to one database.
type Engine struct {
	DB         *sql.DB
	Cat        *dialect.Catalogue
	Names      *schema.Names
	Errors     *sqlerr.Classifier
	Partitions int
	// Positions is the position seam of the dialect's strategy.
	Positions Positions

	readOnly          bool
	maxStatementBytes int64
	// existing and modes: what the engine may create after Open (CreatesIn).
	existing bool
	modes    map[dialect.Area]schema.Mode

	mu       sync.Mutex
	compiled map[string]dialect.Compiled
	prepared map[string]*sql.Stmt

	writeMu sync.Mutex // LockWriter's
	// queryTables are Config.QueryTables by projection, names resolved.
	queryTables map[string]schema.QueryTable
}

// LockWriter queues a write of this process on an engine that runs one
// writing transaction at a time (Locks.SerializesWriters: SQLite) and
// returns its unlock; elsewhere it does nothing. The event store's appends
// and the high-water-mark advancer's writes take it, so they wait for each
// other here, in arrival order, instead of in the database's busy handler,
// which sleeps and retries (an advancer's write of the mark between
// back-to-back appends could lose every retry for tens of milliseconds).
// Whoever holds it must not wait for another holder of this process.
func (e *Engine) LockWriter() (unlock func()) {
	if !e.Cat.Locks.SerializesWriters {
		return func() {}
	}
	e.writeMu.Lock()
	return e.writeMu.Unlock
}

// PartitionMismatchError is returned when the configured partition count
// differs from the persisted one.
type PartitionMismatchError struct {
	Table      string
	Persisted  int
	Configured int
}

func (e *PartitionMismatchError) Error() string {
	return fmt.Sprintf("partition count mismatch: %s holds %d partitions but %d are configured; the count is fixed once initialised (configure %d, or use a new database)",
		e.Table, e.Persisted, e.Configured, e.Persisted)
}

// ErrPartitionMismatch is wrapped by *PartitionMismatchError.
var ErrPartitionMismatch = errors.New("partition count mismatch")

// Unwrap makes errors.Is(err, ErrPartitionMismatch) hold.
func (e *PartitionMismatchError) Unwrap() error { return ErrPartitionMismatch }

// SequenceCacheError is returned when a position sequence is not CACHE 1.
type SequenceCacheError struct {
	Sequence string
	Cache    int64
}

func (e *SequenceCacheError) Error() string {
	return fmt.Sprintf("sequence %s has CACHE %d but must be CACHE 1, or the high-water mark could pass positions still reserved by a session; fix: ALTER SEQUENCE %s CACHE 1; then restart every application that appends events",
		e.Sequence, e.Cache, e.Sequence)
}

// ErrSequenceCache is wrapped by *SequenceCacheError.
var ErrSequenceCache = errors.New("position sequence cache is not 1")

// Unwrap makes errors.Is(err, ErrSequenceCache) hold.
func (e *SequenceCacheError) Unwrap() error { return ErrSequenceCache }

// Validate is cat.Validate(), the one catalogue check (kept for callers
// of the engine package).
func Validate(cat *dialect.Catalogue) error { return cat.Validate() }

// Open binds cat to db: resolves names, creates the schema of every area
// whose mode is Always (verifies the others), seeds the core's own rows and
// checks the partition count and position sequences. With cfg.ReadOnly it
// creates and seeds nothing and only verifies (see Config.ReadOnly).
func Open(ctx context.Context, db *sql.DB, cat dialect.Catalogue, cfg Config) (*Engine, error) {
	if err := cat.Validate(); err != nil {
		return nil, err
	}
	names, err := schema.Resolve(cfg.Names)
	if err != nil {
		return nil, err
	}
	classifier, err := sqlerr.NewClassifier(cat.Errors)
	if err != nil {
		return nil, err
	}
	e := &Engine{DB: db, Cat: &cat, Names: names, Errors: classifier, Partitions: cfg.Partitions, readOnly: cfg.ReadOnly, existing: cfg.Existing, modes: cfg.Modes,
		compiled: map[string]dialect.Compiled{}, prepared: map[string]*sql.Stmt{}}
	if e.Positions, err = newPositions(e); err != nil {
		return nil, err
	}
	verifyOnly := cfg.ReadOnly || cfg.Existing
	if e.Partitions == 0 && !verifyOnly {
		e.Partitions = DefaultPartitions // a verifying engine adopts the persisted count
	}
	if (e.Partitions < 1 && !verifyOnly) || e.Partitions < 0 || e.Partitions > 32767 {
		return nil, fmt.Errorf("partition count %d is out of range 1..32767", e.Partitions)
	}
	// The whole naming plan is checked here, before any SQL runs.
	steps, err := schema.Plan(e.Cat, e.Names, cfg.QueryTables, cfg.Names.Prefixes[dialect.AreaCQRS])
	if err != nil {
		return nil, err
	}
	if err := e.resolveQueryTables(cfg); err != nil {
		return nil, err
	}
	if err := e.readStatementLimit(ctx, db); err != nil {
		return nil, err
	}
	if verifyOnly {
		if err := e.openReadOnly(ctx, cfg); err != nil {
			return nil, err
		}
		return e, nil
	}
	if err := e.create(ctx, cfg, steps); err != nil {
		return nil, err
	}
	return e, nil
}

func (e *Engine) ensureSchema(ctx context.Context, q Querier, cfg Config, steps []schema.Step) error {
	prefix := cfg.Names.Prefixes[dialect.AreaCQRS]
	steps, err := schema.OmitExistingQueryTables(ctx, q, e.Cat, steps)
	if err != nil {
		return err
	}
	if err := schema.ApplyRetrying(ctx, q, steps, cfg.Modes, e.isCreationRace); err != nil {
		return err
	}
	never := map[dialect.Area]bool{}
	for a, m := range cfg.Modes {
		if m == schema.Never {
			never[a] = true
		}
	}
	if err := schema.Verify(ctx, q, e.Cat, schema.Objects(e.Cat, e.Names), never); err != nil {
		return err
	}
	// An existing query table is never altered, only checked against its
	// projection's declaration.
	return schema.CheckQueryTables(ctx, q, e.Cat, e.Names, cfg.QueryTables, prefix, cfg.Modes)
}

// seedExec runs a seed statement. A unique violation means another process
// inserted the row first (engines without a race-free insert-if-missing,
// such as H2's MERGE): the row exists, which is all a seed asks for.
//
// A serialization failure or deadlock (HSQLDB's 40001 when two processes
// seed at once) is retried: the retry either inserts the row or finds it.
func (e *Engine) seedExec(ctx context.Context, q Querier, id dialect.StatementID, tables map[string]string, args map[string]any) error {
	for attempt := 1; ; attempt++ {
		_, err := e.Exec(ctx, q, id, tables, args)
		switch e.Errors.Classify(err) {
		case dialect.ErrUniqueViolation, dialect.ErrDuplicateEventID:
			return nil
		case dialect.ErrSerializationFailure, dialect.ErrDeadlock:
			if attempt < seedAttempts {
				if err := pause(ctx, attempt); err != nil {
					return err
				}
				continue
			}
		}
		return err
	}
}

// seed inserts the rows the core owns (never overwriting) and verifies
// them, each through its owner: the partition metadata, the position
// objects (the position seam), the event store's mark row.
func (e *Engine) seed(ctx context.Context, q Querier, cfg Config) error {
	if err := e.seedPartitions(ctx, q); err != nil {
		return err
	}
	if err := e.preparePositions(ctx, q, cfg); err != nil {
		return err
	}
	return e.SeedMark(ctx, q, EventStoreTopic)
}
