package conformance

import (
	"context"
	"time"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/eventstore"
	"github.com/tidemarkdb/tidemark/core/hwm"
	"github.com/tidemarkdb/tidemark/internal/sqlcount"
	"github.com/tidemarkdb/tidemark/internal/testtime"
)

// testHWMCycleCost counts, through a counting driver wrapper, what the
// lease holder's cycles send: a caught-up cycle is one read (the committed
// end: the holder knows the mark it wrote); a cycle that moves the mark
// after one append is at most two statements on a counter row (the end,
// one write of the mark row) and five on a transaction-horizon dialect
// (the end, a horizon id, the horizon check, one write of the mark row,
// the notification), three where the dialect folds them (xid.end_horizon,
// hwm.advance_notify: PostgreSQL); the position check (a catalogue query) is not
// repeated per cycle. Before, an idle cycle was two reads and a moving one
// a dozen statements on PostgreSQL, three of them writes of the mark row.
// On a counter row, a cycle after an append whose store nudges the advancer
// with its committed end (hwm.Advancer.NudgeCommitted) is one statement.
func testHWMCycleCost(t T, env *Env) {
	ctx, cancel := testtime.Context(context.Background(), 2*time.Minute)
	defer cancel()
	var counts sqlcount.Counts
	e := countedEngine(t, env, defaultConfig(env), &counts)
	s := eventstore.New(e, nil)
	a := hwm.New(e, hwm.Options{Lease: time.Hour}) // no renewal within the test
	appendOne := func() int64 {
		t.Helper()
		res, err := s.Append(ctx, eventstore.Stream{AggregateType: "bank.Account", AggregateID: newID(t),
			Events: []eventstore.Event{ev("test.E", `{}`)}})
		if err != nil {
			t.Fatalf("append: %v", err)
		}
		return res.Positions[0]
	}
	if _, err := advanceUntil(ctx, a, s, appendOne()); err != nil { // takes the lease
		t.Fatal(err)
	}
	cycle := func(what string) (bool, int64) {
		t.Helper()
		before := counts.Total()
		moved, err := a.Cycle(ctx)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return moved, counts.Total() - before
	}
	if moved, n := cycle("caught-up cycle"); moved || n != 1 {
		t.Errorf("a caught-up cycle of the lease holder sent %d statements (moved %v), want 1 read", n, moved)
	}
	limit := int64(2)
	if e.Cat.Positions != dialect.CounterRow {
		// Five unfolded; xid.end_horizon reads the end and takes and
		// first checks the horizon in one (the fresh check then runs only
		// when that check did not pass), hwm.advance_notify writes the
		// mark and notifies in one: three on PostgreSQL, two when the
		// first check passed.
		limit = 5
		for _, id := range []dialect.StatementID{dialect.EndHorizon, dialect.HWMAdvanceNotify} {
			if e.Has(id) {
				limit--
			}
		}
	}
	for i := range 3 {
		want := appendOne()
		moved, n := cycle("cycle after an append")
		if !moved {
			// A horizon that had to wait (another transaction in flight):
			// the next cycle must move it.
			if _, err := advanceUntil(ctx, a, s, want); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if n > limit {
			t.Errorf("append %d: the cycle that moved the mark sent %d statements, want at most %d", i+1, n, limit)
		}
		if m := a.Mark(); m != want {
			t.Errorf("append %d: mark %d, want %d", i+1, m, want)
		}
	}
	if !env.Features.CounterPositions {
		return
	}
	// A store that nudges the advancer with its committed end: on a counter
	// row the cycle after the append publishes that end without reading the
	// counter, one statement (before: two, the read and the write).
	nudging := eventstore.New(e, a)
	for i := range 3 {
		res, err := nudging.Append(ctx, eventstore.Stream{AggregateType: "bank.Account", AggregateID: newID(t),
			Events: []eventstore.Event{ev("test.E", `{}`)}})
		if err != nil {
			t.Fatalf("append: %v", err)
		}
		want := res.Positions[0]
		moved, n := cycle("cycle after a nudging append")
		if !moved || n != 1 {
			t.Errorf("nudging append %d: the cycle after it sent %d statements (moved %v), want 1, the write of the mark", i+1, n, moved)
		}
		if m := a.Mark(); m != want {
			t.Errorf("nudging append %d: mark %d, want %d", i+1, m, want)
		}
	}
	if moved, n := cycle("caught-up cycle after the nudges"); moved || n != 1 {
		t.Errorf("a caught-up cycle after the nudged ones sent %d statements (moved %v), want 1 read", n, moved)
	}
}
