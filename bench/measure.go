package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/eventstore"
	"github.com/tidemarkdb/tidemark/core/schema"
)

const baselineTable = "BENCH_BASELINE"

// baselineNames declares an aggregate whose own table, created by the same
// DDL as the event store's, is the baseline's. It is opened by a second
// engine, so the measured store reads only its own table.
func baselineNames() schema.Config {
	return schema.Config{Aggregates: []schema.Aggregate{
		{Namespace: "bench", Name: "Baseline", EventTable: baselineTable, SnapshotTable: "BENCH_BASELINE_SNAPSHOTS"},
	}}
}

var payload = []byte(`{"amount":125.5,"currency":"EUR","note":"benchmark event payload of a typical size"}`)

var baselineSeq atomic.Int64

// baselineStmt returns the bench's prepared baseline insert of n rows. The
// cache belongs to the bench (its *sql.DB), not to a package map keyed by
// the bench's address: a later bench allocated at a freed bench's address
// got the old database's statement ("Tx.Stmt: statement from different
// database used", and a +Inf ratio in the H2 16×100 cell).
func (b *bench) baselineStmt(ctx context.Context, n int) (*sql.Stmt, error) {
	b.stmtMu.Lock()
	defer b.stmtMu.Unlock()
	if st, ok := b.stmts[n]; ok {
		return st, nil
	}
	row := "(#{id}, #{aggregate_id}, #{aggregate_type}, #{sequence_no}, #{event_type}, #{event_revision}, #{payload}, #{metadata}, #{occurred_at}, #{partition_key}, #{global_position})"
	q := "INSERT INTO " + baselineTable + " (id, aggregate_id, aggregate_type, sequence_no, event_type, event_revision, payload, metadata, occurred_at, partition_key, global_position) VALUES " +
		strings.TrimSuffix(strings.Repeat(row+", ", n), ", ")
	c := dialect.Compile(q, b.e.Cat.Identity.Placeholder)
	st, err := b.db.PrepareContext(ctx, c.SQL)
	if err != nil {
		return nil, err
	}
	if b.stmts == nil {
		b.stmts = map[int]*sql.Stmt{}
	}
	b.stmts[n] = st
	return st, nil
}

// closeStmts closes the bench's prepared statements.
func (b *bench) closeStmts() {
	b.stmtMu.Lock()
	defer b.stmtMu.Unlock()
	for _, st := range b.stmts {
		st.Close()
	}
	b.stmts = nil
}

// baselineTx inserts n identical-shape rows in one transaction: no position
// allocation (a local counter), no version check, no mark.
func (b *bench) baselineTx(ctx context.Context, n int) error {
	st, err := b.baselineStmt(ctx, n)
	if err != nil {
		return err
	}
	agg := uuid.NewString()
	now := time.Now().UTC()
	args := make([]any, 0, n*11)
	for i := 0; i < n; i++ {
		id, _ := uuid.NewV7()
		args = append(args, id.String(), agg, "bench.Baseline", int64(i), "bench.Deposited", 0, string(payload), nil, now,
			eventstore.PartitionKey(agg, b.e.Partitions), baselineSeq.Add(1))
	}
	if b.e.Cat.Positions == dialect.SequenceXIDHorizon {
		// Tidemark appends a single stream with one autocommit statement
		// here, so the baseline does too: the same transaction shape.
		_, err := st.ExecContext(ctx, args...)
		return err
	}
	tx, err := b.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if _, err := tx.StmtContext(ctx, st).ExecContext(ctx, args...); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

func (b *bench) tidemarkTx(ctx context.Context, rng *rand.Rand, n int) error {
	evs := make([]eventstore.Event, n)
	for i := range evs {
		evs[i] = eventstore.Event{Type: "bench.Deposited", Payload: payload}
	}
	_, err := b.store.Append(ctx, eventstore.Stream{AggregateType: "bench.Account", AggregateID: fmt.Sprintf("acc-%d", rng.IntN(1_000_000)), Events: evs})
	return err
}

// appendRate runs writers for one cell and returns events per second and
// the client process's CPU (user + system, an in-process engine such as
// SQLite included) per event in µs.
func (b *bench) appendRate(ctx context.Context, writers, batch int, baseline bool) (float64, float64) {
	run := func(ctx context.Context, rng *rand.Rand) error {
		if baseline {
			return b.baselineTx(ctx, batch)
		}
		return b.tidemarkTx(ctx, rng, batch)
	}
	cpu0 := processCPU()
	rate, calls := timedRate(ctx, writers, batch, run)
	n := float64(max(len(calls)*batch, 1))
	return rate, float64((processCPU() - cpu0).Microseconds()) / n
}

func (b *bench) publish(ctx context.Context) error {
	for {
		moved, err := b.adv.Cycle(ctx)
		if err != nil {
			return err
		}
		if !moved {
			return nil
		}
	}
}

// load appends n events in 500-event transactions and publishes them.
func (b *bench) load(ctx context.Context, n int) error {
	rng := rand.New(rand.NewPCG(1, 2))
	for done := 0; done < n; {
		k := min(500, n-done)
		if err := b.tidemarkTx(ctx, rng, k); err != nil && !eventstore.IsConflict(err) {
			return err
		} else if err == nil {
			done += k
		}
	}
	return b.publish(ctx)
}

func (b *bench) readComparison(ctx context.Context, n int) error {
	if err := b.load(ctx, n); err != nil {
		return err
	}
	table := b.e.Names.Shared["event_store_table"]
	plain := "SELECT id, aggregate_id, aggregate_type, sequence_no, event_type, event_revision, payload, metadata, occurred_at, partition_key, global_position FROM " + table + " ORDER BY global_position"
	var ratios []float64
	var tmRate, blRate float64
	for r := 0; r < *flagRounds; r++ {
		start := time.Now()
		rows, err := b.db.QueryContext(ctx, plain)
		if err != nil {
			return err
		}
		count := 0
		for rows.Next() {
			var id, agg, typ, et, pl string
			var seq, pos, part int64
			var rev int
			var meta sql.NullString
			var at any
			if err := rows.Scan(&id, &agg, &typ, &seq, &et, &rev, &pl, &meta, &at, &part, &pos); err != nil {
				return err
			}
			count++
		}
		rows.Close()
		bl := float64(count) / time.Since(start).Seconds()
		start = time.Now()
		got := 0
		fctx, stop := context.WithCancel(ctx)
		errDone := errors.New("caught up")
		err = b.store.Follow(fctx, 0, eventstore.FollowOptions{PageSize: *flagPage}, func(eventstore.Recorded) error {
			got++
			if got == count {
				return errDone
			}
			return nil
		})
		stop()
		if !errors.Is(err, errDone) {
			return err
		}
		tm := float64(got) / time.Since(start).Seconds()
		if got != count {
			return fmt.Errorf("catch-up read %d events, plain read %d", got, count)
		}
		ratios = append(ratios, tm/bl)
		tmRate, blRate = tmRate+tm, blRate+bl
	}
	n64 := float64(*flagRounds)
	fmt.Printf("   read    catch-up of %d events (Follow, pages of %d) to a no-op consumer: %8.0f ev/s vs one plain SELECT stream %8.0f ev/s  ratio %s\n",
		n, *flagPage, tmRate/n64, blRate/n64, summary(ratios))
	return nil
}

// tailLatency measures commit-to-readable under load: writers append
// single-event transactions; a follower waits on the mark.
func (b *bench) tailLatency(ctx context.Context, writers int, d time.Duration) error {
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	advDone := make(chan struct{})
	go func() { defer close(advDone); _ = b.adv.Run(runCtx) }()
	start, _ := b.store.Mark(ctx)
	var mu sync.Mutex
	committed := map[int64]time.Time{}
	seen := map[int64]time.Time{}
	var wg sync.WaitGroup
	deadline := time.Now().Add(d)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 99))
			for time.Now().Before(deadline) {
				res, err := b.store.Append(ctx, eventstore.Stream{AggregateType: "bench.Account", AggregateID: fmt.Sprintf("t-%d", rng.IntN(1_000_000)),
					Events: []eventstore.Event{{Type: "bench.Tail", Payload: payload}}})
				now := time.Now()
				if err != nil {
					continue
				}
				mu.Lock()
				committed[res.Positions[0]] = now
				mu.Unlock()
				time.Sleep(2 * time.Millisecond)
			}
		}()
	}
	followerDone := make(chan struct{})
	go func() {
		defer close(followerDone)
		after := start
		for {
			changed := b.adv.Changed()
			page, err := b.store.ReadAll(ctx, after, 1000)
			if err == nil && len(page) > 0 {
				now := time.Now()
				mu.Lock()
				for _, r := range page {
					seen[r.GlobalPosition] = now
				}
				mu.Unlock()
				after = page[len(page)-1].GlobalPosition
				continue
			}
			select {
			case <-changed:
			case <-runCtx.Done():
				return
			}
		}
	}()
	wg.Wait()
	time.Sleep(*flagPoll * 3)
	stop()
	<-advDone
	<-followerDone
	var lat []time.Duration
	for p, c := range committed {
		if s, ok := seen[p]; ok {
			lat = append(lat, max(0, s.Sub(c)))
		}
	}
	if len(lat) == 0 {
		return fmt.Errorf("tail latency: no event observed")
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	p := func(q float64) time.Duration { return lat[min(len(lat)-1, int(q*float64(len(lat))))] }
	fmt.Printf("   tail    commit-to-readable, %d writers, poll %s: p50 %s  p99 %s  (n=%d of %d committed; target p99 ≤ %s)\n",
		writers, *flagPoll, p(0.5).Round(10*time.Microsecond), p(0.99).Round(10*time.Microsecond), len(lat), len(committed), *flagPoll+10*time.Millisecond)
	return nil
}

// growthLatency compares single-event append latency at growing table sizes.
func (b *bench) growthLatency(ctx context.Context, sizes []int) error {
	rng := rand.New(rand.NewPCG(5, 6))
	var stored int
	var res []string
	var base time.Duration
	for _, size := range sizes {
		var total int
		b.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+b.e.Names.Shared["event_store_table"]).Scan(&total)
		if size > total {
			if err := b.load(ctx, size-total); err != nil {
				return err
			}
		}
		stored = size
		var lat []time.Duration
		for i := 0; i < 1000; i++ {
			t0 := time.Now()
			if err := b.tidemarkTx(ctx, rng, 1); err != nil && !eventstore.IsConflict(err) {
				return err
			}
			lat = append(lat, time.Since(t0))
		}
		sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
		med := lat[len(lat)/2]
		if base == 0 {
			base = med
		}
		res = append(res, fmt.Sprintf("%d stored: median %s p99 %s (×%.2f)", stored, med.Round(time.Microsecond), lat[len(lat)*99/100].Round(time.Microsecond), float64(med)/float64(base)))
	}
	fmt.Printf("   growth  1-event append latency, 1 writer: %s\n", strings.Join(res, "; "))
	return nil
}
