package engine

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/schema"
)

// PositionObject is a counter row or sequence that hands out a topic's
// positions: the event store's, the capture topic's, the read-model topics'.
type PositionObject struct {
	// Placeholder is the object's table placeholder.
	Placeholder string
	// Area is the area whose schema switch governs the object.
	Area dialect.Area
	// PerTopic is true for an object holding one position per topic (the
	// read-model topics' table on counter engines, whose rows are seeded per
	// topic at runtime); under SequenceXIDHorizon it is one sequence all the
	// same.
	PerTopic bool
}

// The position objects the spec defines, in the order Open prepares them.
var (
	EventStorePositions = PositionObject{Placeholder: "event_store_global_position_table", Area: dialect.AreaEventSourcing}
	CapturePositions    = PositionObject{Placeholder: "event_capture_global_position_table", Area: dialect.AreaMessaging}
	ReadModelPositions  = PositionObject{Placeholder: "read_model_capture_positions_table", Area: dialect.AreaMessaging, PerTopic: true}
)

// PositionObjects lists every position object Open prepares.
func PositionObjects() []PositionObject {
	return []PositionObject{EventStorePositions, CapturePositions, ReadModelPositions}
}

// Positions is the position seam: the statements of a position object
// under the dialect's strategy (allocate, committed end, startup work and
// check). It is chosen once, at Open, from Catalogue.Positions and
// PositionSettings. What an append and the advancer do with it (when to
// reserve, what the next mark is) is the strategy's behaviour, in package
// core/log/position; they call it with the table of their position object.
type Positions interface {
	// Strategy is the catalogue's strategy.
	Strategy() dialect.PositionStrategy
	// Allocate reserves n positions of table in q's transaction and returns
	// the last one (the first is that minus n-1). Under SequenceXIDHorizon
	// the insert draws the positions and Allocate is never called.
	Allocate(ctx context.Context, q Querier, table string, n int) (int64, error)
	// AllocateTopic is Allocate on topic's row of the per-topic position
	// object (ReadModelPositions) under CounterRow; never called under
	// SequenceXIDHorizon, where the insert draws from the shared sequence.
	AllocateTopic(ctx context.Context, q Querier, topic string, n int) (int64, error)
	// CommittedEnd returns the highest position handed out for table.
	CommittedEnd(ctx context.Context, q Querier, table string) (int64, error)
	// Prepare is the startup work of obj (named table): seed a counter row,
	// or check a sequence's CACHE 1 and, when fix is set, correct it.
	Prepare(ctx context.Context, q Querier, obj PositionObject, table string, fix bool) error
	// Check is the check before the mark moves: a sequence must still be
	// CACHE 1 (*SequenceCacheError otherwise); nil for a counter.
	Check(ctx context.Context, table string) error
}

// newPositions chooses the seam for the catalogue's strategy (Validate has
// refused an unknown one).
func newPositions(e *Engine) (Positions, error) {
	switch e.Cat.Positions {
	case dialect.CounterRow:
		return &counterRow{e: e, settings: e.Cat.PositionSettings}, nil
	case dialect.SequenceXIDHorizon:
		return &sequenceHorizon{e: e}, nil
	}
	return nil, fmt.Errorf("dialect %s: unknown position strategy %q", e.Cat.Identity.Name, e.Cat.Positions)
}

func positionTables(table string) map[string]string {
	return map[string]string{"position_table": table}
}

func committedEnd(ctx context.Context, e *Engine, q Querier, table string) (int64, error) {
	var end sql.NullInt64
	if err := e.QueryRow(ctx, q, dialect.CommittedEnd, positionTables(table), nil).Scan(&end); err != nil {
		return 0, fmt.Errorf("reading committed end of %s: %w", table, err)
	}
	return end.Int64, nil
}

// counterRow is CounterRow: a single-row counter incremented and held
// locked by the append until it commits, restored by rollback.
type counterRow struct {
	e        *Engine
	settings dialect.PositionSettings
}

func (*counterRow) Strategy() dialect.PositionStrategy  { return dialect.CounterRow }
func (*counterRow) Check(context.Context, string) error { return nil }

func (c *counterRow) CommittedEnd(ctx context.Context, q Querier, table string) (int64, error) {
	return committedEnd(ctx, c.e, q, table)
}

// counterStatements are the statements of one counter row: a position
// object's single row, or one topic's row of the per-topic object.
type counterStatements struct{ lock, allocate, allocated dialect.StatementID }

var (
	oneRowCounter = counterStatements{dialect.PositionLock, dialect.PositionAllocate, dialect.PositionAllocated}
	topicCounter  = counterStatements{dialect.RMTopicLock, dialect.RMTopicAllocate, dialect.RMTopicAllocated}
)

// Allocate takes table's counter; see allocate.
func (c *counterRow) Allocate(ctx context.Context, q Querier, table string, n int) (int64, error) {
	return c.allocate(ctx, q, oneRowCounter, counterNames{lock: "the position counter " + table}, positionTables(table), map[string]any{"count": n})
}

// AllocateTopic takes topic's row of the per-topic counter; see allocate.
func (c *counterRow) AllocateTopic(ctx context.Context, q Querier, topic string, n int) (int64, error) {
	return c.allocate(ctx, q, topicCounter, counterNames{lock: "the position counter of topic " + topic, of: " of topic " + topic}, nil, map[string]any{"count": n, "topic": topic})
}

// counterNames name a counter row in allocate's errors.
type counterNames struct{ lock, of string }

// allocate takes a counter row in the declared lock form and returns its
// new value: from the allocate statement's row, from the result's
// LastInsertId (AllocatedInResult), or from the allocated statement.
func (c *counterRow) allocate(ctx context.Context, q Querier, st counterStatements, what counterNames, tables map[string]string, args map[string]any) (int64, error) {
	if err := c.e.refuse("allocating positions"); err != nil {
		return 0, err
	}
	if c.settings.CounterLock == dialect.CounterLockFirst {
		if _, err := c.e.Exec(ctx, q, st.lock, tables, args); err != nil {
			return 0, fmt.Errorf("locking %s: %w", what.lock, err)
		}
	}
	var end int64
	if !c.e.Has(st.allocated) {
		if err := c.e.QueryRow(ctx, q, st.allocate, tables, args).Scan(&end); err != nil {
			return 0, fmt.Errorf("allocating positions%s: %w", what.of, err)
		}
		return end, nil
	}
	r, err := c.e.Exec(ctx, q, st.allocate, tables, args)
	if err != nil {
		return 0, fmt.Errorf("allocating positions%s: %w", what.of, err)
	}
	if c.settings.AllocatedInResult {
		if end, err := r.LastInsertId(); err == nil && end > 0 {
			return end, nil
		}
	}
	if err := c.e.QueryRow(ctx, q, st.allocated, tables, args).Scan(&end); err != nil {
		return 0, fmt.Errorf("reading allocated positions%s: %w", what.of, err)
	}
	return end, nil
}

// Prepare seeds the counter row (never overwriting). A per-topic object's
// rows are seeded by the topic's owner at runtime.
func (c *counterRow) Prepare(ctx context.Context, q Querier, obj PositionObject, table string, _ bool) error {
	if obj.PerTopic {
		return nil
	}
	if err := c.e.seedExec(ctx, q, dialect.PositionSeed, positionTables(table), nil); err != nil {
		return fmt.Errorf("seeding %s: %w", table, err)
	}
	return nil
}

// sequenceHorizon is SequenceXIDHorizon: a CACHE 1 sequence drawn in the
// insert by a transaction that already has its id; the mark waits for the
// transaction-id horizon.
type sequenceHorizon struct{ e *Engine }

func (*sequenceHorizon) Strategy() dialect.PositionStrategy { return dialect.SequenceXIDHorizon }

func (*sequenceHorizon) Allocate(context.Context, Querier, string, int) (int64, error) {
	return 0, errors.New("positions are drawn by the insert under " + string(dialect.SequenceXIDHorizon))
}

func (*sequenceHorizon) AllocateTopic(context.Context, Querier, string, int) (int64, error) {
	return 0, errors.New("positions are drawn by the insert under " + string(dialect.SequenceXIDHorizon))
}

func (s *sequenceHorizon) CommittedEnd(ctx context.Context, q Querier, table string) (int64, error) {
	return committedEnd(ctx, s.e, q, table)
}

// Prepare checks the sequence's cache and, with fix, sets it to CACHE 1.
func (s *sequenceHorizon) Prepare(ctx context.Context, q Querier, _ PositionObject, table string, fix bool) error {
	return s.checkCache(ctx, q, table, fix)
}

// Check returns a *SequenceCacheError when table is not CACHE 1.
func (s *sequenceHorizon) Check(ctx context.Context, table string) error {
	return s.checkCache(ctx, s.e.DB, table, false)
}

// checkCache reads the cache size and, when fix is set, runs the ALTER only
// if it is not already 1 (ALTER SEQUENCE rewrites the sequence and discards
// other sessions' cached values).
func (s *sequenceHorizon) checkCache(ctx context.Context, q Querier, table string, fix bool) error {
	tables := positionTables(table)
	var size sql.NullInt64
	if err := s.e.QueryRow(ctx, q, dialect.PositionCacheSize, tables, nil).Scan(&size); err != nil {
		return fmt.Errorf("reading cache size of %s: %w", table, err)
	}
	if size.Valid && size.Int64 == 1 {
		return nil
	}
	if !fix {
		return &SequenceCacheError{Sequence: table, Cache: size.Int64}
	}
	if _, err := s.e.Exec(ctx, q, dialect.PositionFixCache, tables, nil); err != nil {
		return fmt.Errorf("setting %s to CACHE 1: %w", table, err)
	}
	return nil
}

// preparePositions runs the seam's startup work for every position object.
// An object whose area is never created is only checked, and what is
// wrong there is not fatal at start (the advancer refuses to move instead).
func (e *Engine) preparePositions(ctx context.Context, q Querier, cfg Config) error {
	for _, obj := range PositionObjects() {
		fix := cfg.Modes[obj.Area] != schema.Never
		if err := e.Positions.Prepare(ctx, q, obj, e.Names.Shared[obj.Placeholder], fix); err != nil && fix {
			return err
		}
	}
	return nil
}

// CheckSequenceCache returns a *SequenceCacheError when the event store's
// position sequence is not CACHE 1 (nil for a counter).
func (e *Engine) CheckSequenceCache(ctx context.Context) error {
	return e.Positions.Check(ctx, e.Names.Shared[EventStorePositions.Placeholder])
}

// SeedTopicPosition inserts topic's row of the per-topic position object
// (ReadModelPositions) at 0 unless it exists, never overwriting it; under
// SequenceXIDHorizon, where every topic shares one sequence, it does nothing.
func (e *Engine) SeedTopicPosition(ctx context.Context, q Querier, topic string) error {
	if e.Positions.Strategy() != dialect.CounterRow {
		return nil
	}
	if err := e.seedExec(ctx, q, dialect.RMTopicSeed, nil, map[string]any{"topic": topic}); err != nil {
		return fmt.Errorf("seeding the position counter of topic %s: %w", topic, err)
	}
	return nil
}
