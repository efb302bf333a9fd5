package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"time"

	"github.com/tidemarkdb/tidemark/core/consumer"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/eventstore"
	"github.com/tidemarkdb/tidemark/core/projection"
	"github.com/tidemarkdb/tidemark/core/schema"
	"github.com/tidemarkdb/tidemark/internal/sqlcount"
)

var (
	flagProjEvents   = flag.Int("projection-events", 20000, "events of the projection cell")
	flagProjAccounts = flag.Int("projection-accounts", 0, "accounts the projection cell's events go to, each event to one drawn at random (0: an account per event, as many read models as events)")
	flagProjLookups  = flag.Int("projection-lookups", 2000, "finder lookups of the projection cell, each side")
	flagProjTrace    = flag.Bool("projection-trace", false, "print the projection catch-up's statements: calls per chunk and time in the driver")
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
	return benchProjectionNamed("bench-accounts")
}

// benchProjectionNamed is the bench projection under another name.
func benchProjectionNamed(name string) *projection.Projection[benchAccount] {
	p := projection.New(name, func(id string) benchAccount { return benchAccount{ID: id} })
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
// in the projection's chunks, plain; the projection commits in chunks) and
// against its own rows written by hand (floorRate), then FindUnique
// against the same lookup written by hand, alternated.
func projectionCell(ctx context.Context, tg target, fresh func() (*bench, string, error)) error {
	n := *flagProjEvents
	b, dsn, err := loadedOver(ctx, fresh, n, *flagProjAccounts)
	if err != nil {
		return err
	}
	defer b.close()
	p := benchProjection()
	db, counts := b.db, (*sqlcount.Counts)(nil)
	if *flagProjTrace {
		counts = &sqlcount.Counts{ByText: true, Timed: true}
		if db, err = sqlcount.Open(tg.driver, dsn, counts); err != nil {
			return err
		}
		defer db.Close()
	}
	hand := benchProjectionNamed(handProjection).QueryTable()
	hand.Table = "bench_accounts_by_hand"
	e, err := engine.Open(ctx, db, *b.e.Cat, engine.Config{QueryTables: []schema.QueryTable{p.QueryTable(), hand}})
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
	// The floor writes a new read model's rows per event: a floor only when
	// every event makes a read model.
	floor := 0.0
	if *flagProjAccounts <= 0 {
		if floor, err = floorRate(ctx, b, e, hand.Table, n); err != nil {
			return err
		}
	}
	opts, err := st.Options(consumer.EventStore(eventstore.New(e, nil), nil))
	if err != nil {
		return err
	}
	r, err := consumer.NewRunner(ctx, consumer.NewRegistry(e, nil), opts)
	if err != nil {
		return err
	}
	if counts != nil {
		counts.ResetTexts()
	}
	start := time.Now()
	if err := pollAll(ctx, r.Poll, n, "projection applied events"); err != nil {
		return err
	}
	elapsed := time.Since(start)
	proj := float64(n) / elapsed.Seconds()
	if counts != nil {
		printTexts(counts, elapsed)
	}
	models, err := st.Count(ctx)
	if err != nil {
		return err
	}
	fmt.Printf("   projection catch-up, %d events → %d read models: %8.0f ev/s vs Transactional no-op consumer %8.0f ev/s  ratio %.2f (target ≥ 0.5); vs the same with TxBatch %d %8.0f ev/s  ratio %.2f; vs a plain no-op runner %8.0f ev/s  ratio %.2f",
		n, models, proj, noop, proj/noop, projection.DefaultTxBatch, noopChunked, proj/noopChunked, plain, proj/plain)
	if floor > 0 {
		fmt.Printf("; vs its rows written by hand (TxBatch %d, no reads) %8.0f ev/s  ratio %.2f (that floor: %.2f of the no-op with TxBatch)",
			projection.DefaultTxBatch, floor, proj/floor, floor/noopChunked)
	}
	fmt.Println()
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
func loaded(ctx context.Context, fresh func() (*bench, string, error), n int) (*bench, string, error) {
	return loadedOver(ctx, fresh, n, 0)
}

// loadedOver is loaded with the events drawn over that many aggregates
// (0: about one aggregate per event).
func loadedOver(ctx context.Context, fresh func() (*bench, string, error), n, accounts int) (*bench, string, error) {
	if accounts <= 0 {
		accounts = 1_000_000
	}
	b, dsn, err := fresh()
	if err != nil {
		return nil, "", err
	}
	if err := appendStreamsOver(ctx, b, n, 1, accounts); err != nil {
		b.close()
		return nil, "", err
	}
	if err := b.publish(ctx); err != nil {
		b.close()
		return nil, "", err
	}
	return b, dsn, nil
}

// printTexts prints the calls and driver time of each kind of statement
// (its first words: a multi-row insert's sizes count as one) over a cell
// that took elapsed, most time first.
func printTexts(counts *sqlcount.Counts, elapsed time.Duration) {
	type kind struct {
		q     string
		calls int64
		time  time.Duration
	}
	byKind := map[string]*kind{}
	for _, t := range counts.Texts() {
		q := strings.Join(strings.Fields(t.SQL), " ")
		if i := strings.Index(q, " VALUES "); i >= 0 {
			q = q[:i] + " VALUES …"
		}
		if len(q) > 100 {
			q = q[:100] + "…"
		}
		k := byKind[q]
		if k == nil {
			k = &kind{q: q}
			byKind[q] = k
		}
		k.calls += t.Count
		k.time += t.Time
	}
	kinds := make([]*kind, 0, len(byKind))
	for _, k := range byKind {
		kinds = append(kinds, k)
	}
	sort.Slice(kinds, func(i, j int) bool { return kinds[i].time > kinds[j].time })
	fmt.Printf("     trace over %v:\n", elapsed.Round(time.Millisecond))
	for _, k := range kinds {
		fmt.Printf("     %7d calls %9v  %5.1f%%  %s\n", k.calls, k.time.Round(time.Microsecond), 100*k.time.Seconds()/elapsed.Seconds(), k.q)
	}
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
