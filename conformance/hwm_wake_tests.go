package conformance

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/tidemarkdb/tidemark/core/eventstore"
	"github.com/tidemarkdb/tidemark/core/hwm"
	"github.com/tidemarkdb/tidemark/internal/testtime"
)

// testHeldCycleRetriesWithoutNudge: a cycle held back by a transaction in
// flight is tried again by the advancer on its own. With the poll an hour
// away, one nudge finds the mark held by an open AppendTx; the transaction
// then commits and nothing nudges again, and the mark still reaches the
// later append.
func testHeldCycleRetriesWithoutNudge(t T, env *Env) {
	if isCounter(env) {
		skipf(t, "a counter row never holds the mark behind a transaction in flight: a later append waits on the counter")
	}
	s, e := openStore(t, env) // no nudger: the test nudges once, by hand
	ctx, cancel := testtime.Context(context.Background(), 2*time.Minute)
	defer cancel()
	rec := &cycleRecorder{}
	a := hwm.New(e, hwm.Options{PollInterval: time.Hour, Metrics: rec})
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- a.Run(runCtx) }()
	defer func() { stop(); <-done }()
	// Run's first cycle, on the empty store, is over before the appends:
	// from here on only the one nudge below starts a cycle.
	waitFor(t, "Run's first cycle", func() bool { return rec.cycles.Load() > 0 })

	tx, err := e.DB.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := s.AppendTx(ctx, tx, eventstore.Stream{AggregateType: "bank.Account", AggregateID: "held",
		Events: []eventstore.Event{ev("test.Held", `{}`)}}); err != nil {
		t.Fatal(err)
	}
	later, err := s.Append(ctx, eventstore.Stream{AggregateType: "bank.Account", AggregateID: "later",
		Events: []eventstore.Event{ev("test.Later", `{}`)}})
	if err != nil {
		t.Fatal(err)
	}
	a.Nudge()
	waitFor(t, "a horizon check held by the open transaction", func() bool { _, held, _ := rec.get(); return held })
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	want := later.Positions[0]
	waitForOr(t, fmt.Sprintf("the mark at %d with no nudge after the holder ended", want), func() bool {
		m, err := s.Mark(ctx)
		return err == nil && m >= want
	}, func() string { return fmt.Sprintf("advancer mark %d, oldest holder %+v", a.Mark(), oldestHolder(a)) })
}

// cycleRecorder is a holderRecorder that also counts cycles (every cycle
// ends in Observe or Failed).
type cycleRecorder struct {
	holderRecorder
	cycles atomic.Int64
}

func (c *cycleRecorder) Observe(string, int64, int64) { c.cycles.Add(1) }
