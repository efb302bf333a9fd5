package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"sort"
	"time"

	"github.com/tidemarkdb/tidemark/core/consumer"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/eventstore"
	"github.com/tidemarkdb/tidemark/core/projection"
	"github.com/tidemarkdb/tidemark/core/schema"
)

var (
	flagProjEvents  = flag.Int("projection-events", 20000, "events (one per aggregate: as many read models) of the projection cell")
	flagProjLookups = flag.Int("projection-lookups", 2000, "finder lookups of the projection cell, each side")
)

// benchAccount is the projection cell's read model: one per aggregate,
// its key copied into a unique query column, a deposit count in another.
type benchAccount struct {
	ID       string  `json:"id"`
	Amount   float64 `json:"amount"`
	Deposits int64   `json:"deposits"`
}

type benchDeposited struct {
	Amount float64 `json:"amount"`
}

func benchProjection() *projection.Projection[benchAccount] {
	p := projection.New("bench-accounts", func(id string) benchAccount { return benchAccount{ID: id} })
	projection.OnType(p, "bench.Deposited", func(e projection.Event[benchDeposited], s *benchAccount) error {
		s.Amount += e.Value.Amount
		s.Deposits++
		return nil
	})
	projection.Field(p, "account_id", projection.Text, func(s *benchAccount) string { return s.ID }, projection.Unique())
	projection.Field(p, "deposits", projection.Integer, func(s *benchAccount) int64 { return s.Deposits })
	return p
}

// projectionCell: events → read models per second against no-op consumers
// over the same events (Transactional one event per commit, Transactional
// in the projection's chunks, plain; the projection commits in chunks),
// then FindUnique against the same lookup written by hand, alternated.
func projectionCell(ctx context.Context, tg target, fresh func() (*bench, string, error)) error {
	n := *flagProjEvents
	b, err := loaded(ctx, fresh, n)
	if err != nil {
		return err
	}
	defer b.close()
	p := benchProjection()
	e, err := engine.Open(ctx, b.db, *b.e.Cat, engine.Config{QueryTables: []schema.QueryTable{p.QueryTable()}})
	if err != nil {
		return err
	}
	defer e.Close()
	st, err := projection.Open(ctx, e, p)
	if err != nil {
		return err
	}
	// Three no-op consumers over the same events: Transactional one event
	// per commit (the comparison), Transactional with the
	// projection's own chunks (DefaultTxBatch), and a plain runner.
	noop, _, err := runnerRate(ctx, b, "projection-noop", runnerKind{tx: true}, n)
	if err != nil {
		return err
	}
	noopChunked, _, err := runnerRate(ctx, b, "projection-noop-chunked", runnerKind{tx: true, batch: projection.DefaultTxBatch}, n)
	if err != nil {
		return err
	}
	plain, _, err := runnerRate(ctx, b, "projection-noop-plain", runnerKind{}, n)
	if err != nil {
		return err
	}
	opts, err := st.Options(consumer.EventStore(eventstore.New(e, nil), nil))
	if err != nil {
		return err
	}
	r, err := consumer.NewRunner(ctx, consumer.NewRegistry(e, nil), opts)
	if err != nil {
		return err
	}
	start := time.Now()
	if err := pollAll(ctx, r.Poll, n, "projection applied events"); err != nil {
		return err
	}
	proj := float64(n) / time.Since(start).Seconds()
	models, err := st.Count(ctx)
	if err != nil {
		return err
	}
	fmt.Printf("   projection catch-up, %d events → %d read models: %8.0f ev/s vs Transactional no-op consumer %8.0f ev/s  ratio %.2f (target ≥ 0.5); vs the same with TxBatch %d %8.0f ev/s  ratio %.2f; vs a plain no-op runner %8.0f ev/s  ratio %.2f\n",
		n, models, proj, noop, proj/noop, projection.DefaultTxBatch, noopChunked, proj/noopChunked, plain, proj/plain)
	return finderCell(ctx, e, st)
}

// finderCell times FindUnique and the hand-written statement it stands for
// (one indexed lookup joined to its message), alternated over the same
// random keys.
func finderCell(ctx context.Context, e *engine.Engine, st *projection.Store[benchAccount]) error {
	page, err := st.Find(ctx, projection.Query{Limit: 100000})
	if err != nil {
		return err
	}
	keys := make([]string, len(page.Items))
	for i, it := range page.Items {
		keys[i] = it.Key
	}
	if len(keys) == 0 {
		return fmt.Errorf("no read models")
	}
	return uniqueFinder(ctx, e, st, len(keys), func(r *rand.Rand) string { return keys[r.IntN(len(keys))] })
}

// loaded is a fresh database holding n single-event streams, published
// (the mark past them), for a catch-up cell.
func loaded(ctx context.Context, fresh func() (*bench, string, error), n int) (*bench, error) {
	b, _, err := fresh()
	if err != nil {
		return nil, err
	}
	if err := appendStreams(ctx, b, n, 1); err != nil {
		b.close()
		return nil, err
	}
	if err := b.publish(ctx); err != nil {
		b.close()
		return nil, err
	}
	return b, nil
}

// pollAll polls until n were applied (or delivered); what names them in
// the error when the polls run dry first.
func pollAll(ctx context.Context, poll func(context.Context) (int, error), n int, what string) error {
	total := 0
	for total < n {
		k, err := poll(ctx)
		if err != nil {
			return err
		}
		if k == 0 {
			break
		}
		total += k
	}
	if total != n {
		return fmt.Errorf("%s: %d of %d", what, total, n)
	}
	return nil
}

func p50(d []time.Duration) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}
