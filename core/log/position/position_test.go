package position_test

import (
	"context"
	"testing"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/log/position"
	"github.com/tidemarkdb/tidemark/internal/sqlitetest"
)

func newEngine(t *testing.T) *engine.Engine { return sqlitetest.Engine(t) }

// TestCounterWriter: a counter row reserves n consecutive positions ending
// at the counter, gives back the tail on Resize with no gap, and reports
// the highest as committed.
func TestCounterWriter(t *testing.T) {
	e := newEngine(t)
	ctx := context.Background()
	table := e.Names.Shared[engine.EventStorePositions.Placeholder]
	w := position.Of(e).Writer(engine.EventStorePositions)
	if w.Draws() {
		t.Fatal("a counter row's insert draws positions")
	}
	held := false
	w.Hold(func() { held = true })
	if !held {
		t.Error("a counter row does not hold appends until commit")
	}
	tx, err := e.DB.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	locked := 0
	r, err := w.Reserve(ctx, tx, 5, position.Reservation{}, func() { locked++ })
	if err != nil {
		t.Fatal(err)
	}
	if !r.Held() || r.Position(0) != 1 || r.Position(4) != 5 || locked != 1 {
		t.Fatalf("reserved %d..%d (held %v, locked %d), want 1..5, locked once", r.Position(0), r.Position(4), r.Held(), locked)
	}
	if again, err := w.Reserve(ctx, tx, 5, r, func() { locked++ }); err != nil || again != r || locked != 1 {
		t.Fatalf("Reserve of a held reservation: %v, %v, locked %d", again, err, locked)
	}
	if r, err = w.Resize(ctx, tx, r, 3); err != nil {
		t.Fatal(err)
	}
	if r.Position(0) != 1 || r.Position(2) != 3 {
		t.Errorf("resized to %d..%d, want 1..3", r.Position(0), r.Position(2))
	}
	if end, err := e.Positions.CommittedEnd(ctx, tx, table); err != nil || end != 3 {
		t.Errorf("counter after Resize %d (%v), want 3", end, err)
	}
	if end, ok := w.Committed([]int64{2, 3, 1}); !ok || end != 3 {
		t.Errorf("Committed = %d, %v; want 3, true", end, ok)
	}
}

// TestCounterFrontierReport: the lease holder's next end is a reported
// committed end past the mark, used once; otherwise the counter is read.
// A per-topic table's reports are ignored.
func TestCounterFrontierReport(t *testing.T) {
	e := newEngine(t)
	ctx := context.Background()
	table := e.Names.Shared[engine.EventStorePositions.Placeholder]
	f := position.Of(e).Frontier(position.FrontierOptions{Table: table})
	f.Report(7)
	f.Report(4)
	if end, err := f.End(ctx, true, 2); err != nil || end.Pos != 7 {
		t.Errorf("holder's end after reports %d (%v), want 7", end.Pos, err)
	}
	if end, err := f.End(ctx, true, 2); err != nil || end.Pos != 0 {
		t.Errorf("holder's end with no report %d (%v), want the counter, 0", end.Pos, err)
	}
	f.Report(9)
	if end, err := f.End(ctx, false, 2); err != nil || end.Pos != 0 {
		t.Errorf("non-holder's end %d (%v), want the counter, 0", end.Pos, err)
	}
	if f.Scope() != position.ScopeCluster {
		t.Errorf("scope %q", f.Scope())
	}
	perTopic := position.Of(e).Frontier(position.FrontierOptions{Table: e.Names.Shared[engine.ReadModelPositions.Placeholder]})
	perTopic.Report(5)
	if end, err := perTopic.End(ctx, true, 0); err == nil && end.Pos == 5 {
		t.Error("a per-topic table took a reported end")
	}
}

// TestDrawnWriter: under SEQUENCE_XID_HORIZON the insert draws positions:
// nothing is reserved or held, and no end is reported as committed.
func TestDrawnWriter(t *testing.T) {
	e := &engine.Engine{Cat: &dialect.Catalogue{Positions: dialect.SequenceXIDHorizon}}
	s := position.Of(e)
	if s.Name() != dialect.SequenceXIDHorizon {
		t.Fatalf("strategy %q", s.Name())
	}
	w := s.Writer(engine.EventStorePositions)
	if !w.Draws() {
		t.Error("the insert does not draw positions")
	}
	w.Hold(func() { t.Error("Hold locked") })
	ctx := context.Background()
	for _, r := range []func() (position.Reservation, error){
		func() (position.Reservation, error) { return w.ReserveFirst(ctx, nil, 3, func() { t.Error("locked") }) },
		func() (position.Reservation, error) {
			return w.Reserve(ctx, nil, 3, position.Reservation{}, func() { t.Error("locked") })
		},
	} {
		if got, err := r(); err != nil || got.Held() {
			t.Errorf("reserved %v (%v), want nothing", got, err)
		}
	}
	if _, ok := w.Committed([]int64{1, 2}); ok {
		t.Error("a drawn end reported as committed")
	}
}
