package conformance

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/eventstore"
	"github.com/tidemarkdb/tidemark/core/hwm"
	"github.com/tidemarkdb/tidemark/internal/testtime"
)

func hwmTests() []Test {
	return []Test{
		{"hwm/interleaved_commits_tail_reader", testInterleavedCommits},
		{"hwm/dsn_params_two_engines_no_busy", testDSNParamsTwoEngines},
		{"hwm/interleaved_autocommit_tail_reader", testInterleavedAutocommit},
		{"hwm/long_transaction_holds_mark", testLongTransactionHoldsMark},
		{"hwm/two_advancers_lease", testTwoAdvancers},
		{"hwm/foreign_horizon_discarded", testForeignHorizon},
		{"hwm/metrics", testMetrics},
		{"hwm/stop_is_not_failure", testStopIsNotFailure},
		{"hwm/other_database_does_not_hold", testOtherDatabaseDoesNotHold},
		{"hwm/same_database_holds", testSameDatabaseHolds},
		{"hwm/held_cycle_retries_without_nudge", testHeldCycleRetriesWithoutNudge},
	}
}

func testInterleavedCommits(t T, env *Env) { interleaved(t, env, false) }

// testInterleavedAutocommit is the same tail reader with the writers using
// Append: where the dialect allows it (Features.OneStatementAppend) each
// single-stream append is one autocommit INSERT drawing its positions,
// racing the others with no transaction of the core's around it.
func testInterleavedAutocommit(t T, env *Env) {
	if env.Features.OneStatementAppend {
		t.Logf("writers append with one autocommit statement each")
	} else {
		t.Logf("the dialect has no one-statement append: writers use Append's own transaction")
	}
	interleaved(t, env, true)
}

// interleaved runs 8 writers and one tail reader (Follow): the reader gets
// every committed event once, in global order, and no rolled-back one.
// viaAppend makes the writers use Append instead of AppendTx in a
// transaction held open (and sometimes rolled back) by the test.
func interleaved(t T, env *Env, viaAppend bool) { interleavedOn(t, env, viaAppend, defaultConfig(env)) }

// interleavedOn is interleaved on an engine opened with cfg (with one event
// table, Follow streams its pages: followStreamTests), group commit off.
func interleavedOn(t T, env *Env, viaAppend bool, cfg engine.Config) {
	_ = interleavedWith(t, env, viaAppend, cfg, 8, eventstore.WithGroupCommit(false))
}

// interleavedWith is interleaved on an engine opened with cfg, with writers
// writers and the store made with opts. Each Append's own positions must
// follow its order (consecutive where a counter row allocates them).
func interleavedWith(t T, env *Env, viaAppend bool, cfg engine.Config, writers int, opts ...eventstore.Option) *eventstore.Store {
	e := openEngine(t, env, cfg)
	s := eventstore.New(e, nil, opts...)
	ctx, cancel := testtime.Context(context.Background(), 3*time.Minute)
	defer cancel()
	adv := hwm.New(e, hwm.Options{PollInterval: 10 * time.Millisecond})
	advCtx, stopAdv := context.WithCancel(ctx)
	advDone := make(chan struct{})
	go func() { defer close(advDone); _ = adv.Run(advCtx) }()
	defer func() { stopAdv(); <-advDone }()

	const perWriter = 30
	var mu sync.Mutex
	committed := map[string]bool{}
	rolledBack := map[string]bool{}
	var wg sync.WaitGroup
	var writeErr error
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			for i := range perWriter {
				n := 1 + rng.IntN(3)
				var evs []eventstore.Event
				for j := range n {
					evs = append(evs, ev("test.Interleaved", fmt.Sprintf(`{"w":%d,"i":%d,"j":%d}`, w, i, j)))
				}
				stream := eventstore.Stream{AggregateType: "bank.Account", AggregateID: fmt.Sprintf("agg-%d", rng.IntN(24)), Events: evs}
				if viaAppend {
					res, err := s.Append(ctx, stream)
					mu.Lock()
					switch {
					case err == nil:
						for k := 1; k < len(res.Positions); k++ {
							if p := res.Positions; p[k] <= p[k-1] || isCounter(env) && p[k] != p[k-1]+1 {
								writeErr = fmt.Errorf("writer %d: positions %v of one append not consecutive in its order", w, p)
							}
						}
						for _, x := range evs {
							committed[string(x.Payload)] = true
						}
					case eventstore.IsConflict(err):
					default:
						writeErr = fmt.Errorf("writer %d: %w", w, err)
					}
					mu.Unlock()
					if err != nil && !eventstore.IsConflict(err) {
						return
					}
					adv.Nudge()
					continue
				}
				tx, err := e.DB.BeginTx(ctx, nil)
				if err == nil {
					_, err = s.AppendTx(ctx, tx, stream)
				}
				if err != nil {
					if tx != nil {
						_ = tx.Rollback()
					}
					if eventstore.IsConflict(err) {
						continue // another writer took this sequence number; nothing stored
					}
					mu.Lock()
					writeErr = fmt.Errorf("writer %d: %w", w, err)
					mu.Unlock()
					return
				}
				roll := rng.IntN(10) == 0
				if rng.IntN(10) == 0 {
					time.Sleep(time.Duration(5+rng.IntN(40)) * time.Millisecond) // held open while others commit
				}
				if roll {
					err = tx.Rollback()
				} else {
					err = tx.Commit()
				}
				mu.Lock()
				for _, x := range evs {
					key := string(x.Payload)
					if roll {
						rolledBack[key] = true
					} else if err == nil {
						committed[key] = true
					}
				}
				if err != nil && writeErr == nil {
					writeErr = err
				}
				mu.Unlock()
				adv.Nudge()
			}
		}()
	}
	writersDone := make(chan struct{})
	go func() { wg.Wait(); close(writersDone) }()

	seen := map[string]bool{}
	var last int64
	followCtx, stopFollow := context.WithCancel(ctx)
	defer stopFollow()
	followErr := make(chan error, 1)
	go func() {
		followErr <- s.Follow(followCtx, 0, eventstore.FollowOptions{Waker: adv, PollInterval: 20 * time.Millisecond, PageSize: 200}, func(r eventstore.Recorded) error {
			mu.Lock()
			defer mu.Unlock()
			if r.GlobalPosition <= last {
				return fmt.Errorf("position %d after %d: not in global order", r.GlobalPosition, last)
			}
			last = r.GlobalPosition
			key := string(r.Payload)
			if seen[key] {
				return fmt.Errorf("event %s delivered twice", key)
			}
			seen[key] = true
			return nil
		})
	}()
	<-writersDone
	// Every writer is done: wait (bounded) until the follower has caught up.
	for {
		adv.Nudge()
		mu.Lock()
		caught := len(seen) >= len(committed)
		mu.Unlock()
		if caught {
			break
		}
		select {
		case err := <-followErr:
			t.Fatalf("follower stopped: %v", err)
		case <-ctx.Done():
			t.Fatalf("tail reader gave up: read %d of %d committed events", len(seen), len(committed))
		case <-time.After(20 * time.Millisecond):
		}
	}
	// A little longer: nothing else may arrive (no rolled-back event, no duplicate).
	for range 5 {
		if _, err := adv.Cycle(ctx); err != nil {
			t.Fatal(err)
		}
	}
	stopFollow()
	if err := <-followErr; err != nil && !errors.Is(err, context.Canceled) {
		t.Fatalf("follower: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if writeErr != nil {
		t.Fatalf("%v", writeErr)
	}
	for k := range seen {
		if rolledBack[k] {
			t.Errorf("rolled-back event %s was delivered", k)
		}
		if !committed[k] {
			t.Errorf("event %s delivered but never committed", k)
		}
	}
	if len(seen) != len(committed) {
		t.Errorf("delivered %d events, committed %d", len(seen), len(committed))
	}
	if (!viaAppend && len(rolledBack) == 0) || len(committed) < writers*perWriter/2 {
		t.Errorf("test shape too weak: %d committed, %d rolled back", len(committed), len(rolledBack))
	}
	t.Logf("%d committed, %d rolled back, last position %d", len(committed), len(rolledBack), last)
	return s
}

func testLongTransactionHoldsMark(t T, env *Env) {
	s, e := openStore(t, env)
	ctx, cancel := testtime.Context(context.Background(), 2*time.Minute)
	defer cancel()
	a := advancerOf(e)
	first := appendAndPublish(t, s, e, eventstore.Stream{AggregateType: "bank.Account", AggregateID: "before", Events: []eventstore.Event{ev("test.E", `{}`)}})

	tx, err := e.DB.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	held, err := s.AppendTx(ctx, tx, eventstore.Stream{AggregateType: "bank.Account", AggregateID: "long", Events: []eventstore.Event{ev("test.Long", `{}`)}})
	if err != nil {
		t.Fatal(err)
	}
	// A later append: it commits at once on a sequence, or waits on the
	// counter row until the long transaction ends.
	later := make(chan eventstore.Appended, 1)
	laterErr := make(chan error, 1)
	go func() {
		res, err := s.Append(ctx, eventstore.Stream{AggregateType: "bank.Account", AggregateID: "later", Events: []eventstore.Event{ev("test.Later", `{}`)}})
		laterErr <- err
		later <- res
	}()
	var r eventstore.Appended
	if !isCounter(env) {
		if err := <-laterErr; err != nil {
			t.Fatal(err)
		}
		if r = <-later; r.Positions[0] <= held.Positions[0] {
			t.Fatalf("later append got position %d, not after %d", r.Positions[0], held.Positions[0])
		}
	}
	for range 20 {
		if _, err := a.Cycle(ctx); err != nil {
			t.Fatal(err)
		}
		m, err := s.Mark(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if m >= held.Positions[0] {
			t.Fatalf("mark %d passed position %d of a transaction still open", m, held.Positions[0])
		}
		if m < first.Positions[0] {
			t.Fatalf("mark %d fell below %d", m, first.Positions[0])
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if isCounter(env) {
		if err := <-laterErr; err != nil {
			t.Fatal(err)
		}
		r = <-later
	}
	if _, err := advanceUntil(ctx, a, s, r.Positions[0]); err != nil {
		t.Fatalf("mark did not catch up after the long transaction ended: %v", err)
	}
	got, _ := s.ReadAll(ctx, first.Positions[0], 10)
	if len(got) != 2 {
		t.Errorf("read %d events after the first, want 2", len(got))
	}
}

func testTwoAdvancers(t T, env *Env) {
	s, e := openStore(t, env)
	ctx := context.Background()
	a := hwm.New(e, hwm.Options{Owner: "advancer-a", Lease: 1500 * time.Millisecond})
	b := hwm.New(e, hwm.Options{Owner: "advancer-b", Lease: time.Minute})
	appendOne := func() int64 {
		t.Helper()
		res, err := s.Append(ctx, eventstore.Stream{AggregateType: "bank.Account", AggregateID: "lease", Events: []eventstore.Event{ev("test.E", `{}`)}})
		if err != nil {
			t.Fatal(err)
		}
		return res.Positions[0]
	}
	// a moves the mark and so holds the lease.
	if _, err := advanceUntil(ctx, a, s, appendOne()); err != nil {
		t.Fatal(err)
	}
	p2 := appendOne()
	for range 3 {
		moved, err := b.Cycle(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if moved {
			t.Fatalf("advancer without the lease moved the mark")
		}
	}
	if m, _ := s.Mark(ctx); m >= p2 {
		t.Fatalf("mark moved to %d without its lease holder", m)
	}
	if _, err := advanceUntil(ctx, a, s, p2); err != nil {
		t.Fatal(err)
	}
	// a stops; once its lease expires on the database clock, b takes over.
	if _, err := advanceUntil(ctx, b, s, appendOne()); err != nil {
		t.Fatalf("advancer b did not take over the expired lease: %v", err)
	}
	p4 := appendOne()
	for range 3 {
		if moved, err := a.Cycle(ctx); err != nil || moved {
			t.Fatalf("advancer a moved the mark after losing its lease (moved=%v err=%v)", moved, err)
		}
	}
	if m, _ := s.Mark(ctx); m >= p4 {
		t.Fatalf("mark %d moved without b", m)
	}
	if _, err := advanceUntil(ctx, b, s, p4); err != nil {
		t.Fatal(err)
	}
}

// testForeignHorizon: a pending horizon that is not below a fresh
// transaction id (the database was restored into another cluster) is
// discarded with its pending end, never trusted.
func testForeignHorizon(t T, env *Env) {
	if isCounter(env) {
		skipf(t, "positions are %s: the mark follows the committed counter, there is no horizon", env.Catalogue.Positions)
	}
	s, e := openStore(t, env)
	ctx := context.Background()
	a := hwm.New(e, hwm.Options{Owner: "restored"})
	p := appendAndPublishWith(t, s, a)
	table := e.Names.Shared["high_water_mark_store_table"]
	// A pending end far beyond anything handed out, with a horizon from
	// "another cluster" (far above any id this one will assign soon).
	if _, err := e.DB.ExecContext(ctx, "UPDATE "+table+" SET pending_end = 1000000, pending_horizon = 4000000000000000000 WHERE topic_name = 'event-store'"); err != nil {
		t.Fatal(err)
	}
	// The advancer that starts on the restored database (same owner): a
	// running holder trusts the row it wrote for a third of its lease and
	// reads it again after.
	a = hwm.New(e, hwm.Options{Owner: "restored"})
	if _, err := a.Cycle(ctx); err != nil {
		t.Fatal(err)
	}
	m, err := s.Mark(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if m >= 1000000 || m < p {
		t.Fatalf("mark %d after a foreign horizon (want %d)", m, p)
	}
	var pending sql.NullInt64
	if err := e.DB.QueryRowContext(ctx, "SELECT pending_end FROM "+table+" WHERE topic_name = 'event-store'").Scan(&pending); err != nil {
		t.Fatal(err)
	}
	if pending.Valid && pending.Int64 >= 1000000 {
		t.Errorf("foreign pending end %d kept", pending.Int64)
	}
	// The mark still works afterwards.
	if _, err := advanceUntil(ctx, a, s, appendAndPublishWith(t, s, a)); err != nil {
		t.Fatal(err)
	}
}

func appendAndPublishWith(t T, s *eventstore.Store, a *hwm.Advancer) int64 {
	t.Helper()
	ctx := context.Background()
	res, err := s.Append(ctx, eventstore.Stream{AggregateType: "bank.Account", AggregateID: "h-1", Events: []eventstore.Event{ev("test.E", `{}`)}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := advanceUntil(ctx, a, s, res.Positions[0]); err != nil {
		t.Fatal(err)
	}
	return res.Positions[0]
}

type metricsRecorder struct {
	mu         sync.Mutex
	mark, end  int64
	calls      int
	backwards  bool
	lastFailed error
}

func (m *metricsRecorder) Observe(topic string, mark, end int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if mark < m.mark {
		m.backwards = true
	}
	m.mark, m.end, m.calls = mark, end, m.calls+1
}

func (m *metricsRecorder) Failed(topic string, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.lastFailed = err
}

// testMetrics: the mark and the highest position handed out reach the
// metrics hook; the lag (end - mark) is zero once everything is published.
func testMetrics(t T, env *Env) {
	s, e := openStore(t, env)
	rec := &metricsRecorder{}
	a := hwm.New(e, hwm.Options{Metrics: rec})
	var last int64
	for range 3 {
		last = appendAndPublishWith(t, s, a)
	}
	if _, err := a.Cycle(context.Background()); err != nil {
		t.Fatal(err)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if rec.calls == 0 || rec.mark != last || rec.end != last || rec.backwards || rec.lastFailed != nil {
		t.Errorf("metrics: calls=%d mark=%d end=%d (want %d) backwards=%v failed=%v", rec.calls, rec.mark, rec.end, last, rec.backwards, rec.lastFailed)
	}
}
