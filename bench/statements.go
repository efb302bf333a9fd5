package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"time"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/eventstore"
	"github.com/tidemarkdb/tidemark/core/hwm"
	"github.com/tidemarkdb/tidemark/internal/sqlcount"
)

// cycleCounter counts advancer cycles (every cycle ends in Observe or Failed).
type cycleCounter struct{ cycles, failed atomic.Int64 }

func (c *cycleCounter) Observe(string, int64, int64) { c.cycles.Add(1) }
func (c *cycleCounter) Failed(string, error)         { c.failed.Add(1) }

// statementsPerAppend counts, through a counting driver wrapper, the
// statements the client sends per single-event append at 1 writer with the
// high-water-mark advancer running and nudged by every append, as an
// application runs it. It prints statements (Exec and Query) and the same
// with BEGIN/COMMIT/ROLLBACK counted.
func statementsPerAppend(ctx context.Context, cat dialect.Catalogue, driver, dsn string) error {
	counts := sqlcount.Counts{ByText: true}
	db, err := sqlcount.Open(driver, dsn, &counts)
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(8)
	db.SetMaxIdleConns(8)
	e, err := engine.Open(ctx, db, cat, engine.Config{})
	if err != nil {
		return err
	}
	defer e.Close()
	var cc cycleCounter
	adv := hwm.New(e, hwm.Options{PollInterval: *flagPoll, Coalesce: *flagCoalesce, Metrics: &cc})
	store := eventstore.New(e, adv)
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = adv.Run(runCtx) }()
	defer func() { stop(); <-done }()
	rng := rand.New(rand.NewPCG(1, uint64(time.Now().UnixNano())))
	appendOne := func() error {
		_, err := store.Append(ctx, eventstore.Stream{AggregateType: "bench.Account",
			AggregateID: fmt.Sprintf("acc-%d", rng.IntN(1_000_000)),
			Events:      []eventstore.Event{{Type: "bench.Deposited", Payload: payload}}})
		return err
	}
	for range 200 { // warm-up: statements prepared, the lease taken, the check run
		if err := appendOne(); err != nil {
			return err
		}
	}
	s0, t0, c0 := counts.Statements.Load(), counts.Tx.Load(), cc.cycles.Load()
	counts.ResetTexts()
	n := 0
	deadline := time.Now().Add(2 * *flagCell)
	for time.Now().Before(deadline) {
		if err := appendOne(); err != nil {
			return err
		}
		n++
	}
	s, tx, cyc := counts.Statements.Load()-s0, counts.Tx.Load()-t0, cc.cycles.Load()-c0
	fmt.Printf("   stmts   per 1-event append, 1 writer, advancer running: %.2f statements (%.2f with BEGIN/COMMIT/ROLLBACK); %d appends (%.0f/s), %d advancer cycles (%.1f appends per cycle)\n",
		float64(s)/float64(n), float64(s+tx)/float64(n), n, float64(n)/(2**flagCell).Seconds(), cyc, float64(n)/float64(max(cyc, 1)))
	for _, t := range counts.Texts() {
		fmt.Printf("           %5.2f  %s\n", float64(t.Count)/float64(n), shortSQL(t.SQL))
	}
	return nil
}

// shortSQL is q on one line, cut at 110 characters.
func shortSQL(q string) string {
	q = strings.Join(strings.Fields(q), " ")
	if len(q) > 110 {
		q = q[:107] + "..."
	}
	return q
}
