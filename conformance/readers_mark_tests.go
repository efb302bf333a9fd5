package conformance

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/tidemarkdb/tidemark/core/consumer"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/eventstore"
	"github.com/tidemarkdb/tidemark/core/hwm"
	"github.com/tidemarkdb/tidemark/core/topic"
	"github.com/tidemarkdb/tidemark/internal/testtime"
)

// readersMarkTests hold every reader that trusts a mark to the mark's
// promise while writers commit out of order with group commit on.
func readersMarkTests() []Test {
	return []Test{
		{"hwm/every_reader_gets_every_commit_group_commit", testEveryReaderGetsEveryCommit},
	}
}

// positionLog is what one reader received, position by position.
type positionLog struct {
	mu   sync.Mutex
	name string
	got  map[int64]int
	last int64 // highest position received (stream readers: in order)
	err  error
}

func newPositionLog(name string) *positionLog {
	return &positionLog{name: name, got: map[int64]int{}}
}

// add records p; ordered readers must receive positions in rising order.
func (l *positionLog) add(p int64, ordered bool) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if ordered && p <= l.last {
		l.err = fmt.Errorf("%s: position %d after %d: not in order", l.name, p, l.last)
		return l.err
	}
	l.got[p]++
	l.last = max(l.last, p)
	return nil
}

// missing lists the committed positions l never received, and the
// positions it received more than once or that were never committed.
func (l *positionLog) check(committed map[int64]bool) (missing, twice, phantom []int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for p := range committed {
		if l.got[p] == 0 {
			missing = append(missing, p)
		}
	}
	for p, n := range l.got {
		if n > 1 {
			twice = append(twice, p)
		}
		if !committed[p] {
			phantom = append(phantom, p)
		}
	}
	slices.Sort(missing)
	return missing, twice, phantom
}

func (l *positionLog) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.got)
}

// testEveryReaderGetsEveryCommit runs writers that append with group commit
// on (single events and a few pairs, some in the caller's transaction and
// rolled back) and publishers to the capture topic, each topic's advancer
// cycling without pause and nudged by every commit, while every reader that
// trusts a mark reads: the event store's Follow and a ReadAll loop, the
// capture topic's Follow, and a consumer runner over both. Each must
// receive every committed position exactly once and nothing else. On
// PostgreSQL both sequences are also drawn one value at a time in loops, so
// nextval logs ahead often between the writers' draws. (The end read that could see a logged-ahead value is
// checked at the seam by positions/*_end_never_ahead_of_draws, which meets
// that window; this test, a torture of the readers, rarely does.)
func testEveryReaderGetsEveryCommit(t T, env *Env) {
	e := openEngine(t, env, defaultConfig(env))
	ctx, cancel := testtime.Context(context.Background(), 3*time.Minute)
	defer cancel()
	// The advancers cycle without pause: the mark moves while commits are
	// in flight as often as it can.
	fast := hwm.Options{PollInterval: time.Millisecond, Coalesce: -1}
	adv := hwm.New(e, fast)
	s := eventstore.New(e, adv, eventstore.WithGroupCommit(true))
	tp, err := topic.New(ctx, e)
	if err != nil {
		t.Fatalf("topic.New: %v", err)
	}
	tadv := tp.Advancer(fast)
	bg, stopBG := context.WithCancel(ctx)
	var bgWG sync.WaitGroup
	defer func() { stopBG(); bgWG.Wait() }()
	for _, a := range []*hwm.Advancer{adv, tadv} {
		bgWG.Add(1)
		go func() { defer bgWG.Done(); _ = a.Run(bg) }()
	}

	var mu sync.Mutex
	events, messages := map[int64]bool{}, map[int64]bool{}
	var firstWriteErr error
	writeErr := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if firstWriteErr == nil {
			firstWriteErr = err
		}
	}
	var wg sync.WaitGroup
	const writers, perWriter, publishers, perPublisher = 4, 150, 2, 100
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 26))
			for i := range perWriter {
				var evs []eventstore.Event
				for j := range 1 + rng.IntN(8)/7 {
					evs = append(evs, ev("t.Read", fmt.Sprintf(`{"w":%d,"i":%d,"j":%d}`, w, i, j)))
				}
				st := eventstore.Stream{AggregateType: "bank.Account", AggregateID: fmt.Sprintf("r-%d-%d", w, rng.IntN(100)), Events: evs}
				pos, rolled, err := appendMaybeInTx(ctx, e.DB, s, st, i%5 == 4, i%10 == 9)
				if err != nil {
					writeErr(fmt.Errorf("writer %d: %w", w, err))
					return
				}
				if !rolled {
					mu.Lock()
					for _, p := range pos {
						events[p] = true
					}
					mu.Unlock()
				}
			}
		}()
	}
	for w := range publishers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perPublisher {
				pos, err := tp.Publish(ctx, msg(fmt.Sprintf("k-%d", (w+i)%7), fmt.Sprintf(`{"p":%d,"i":%d}`, w, i)))
				if err != nil {
					writeErr(fmt.Errorf("publisher %d: %w", w, err))
					return
				}
				mu.Lock()
				for _, p := range pos {
					messages[p] = true
				}
				mu.Unlock()
			}
		}()
	}
	provokeLogAhead(bg, env, &bgWG, e.Names.Shared["event_store_global_position_table"], e.Names.Shared["event_capture_global_position_table"])

	readers := startMarkReaders(t, bg, &bgWG, e, s, tp, adv, tadv)
	wg.Wait()
	if firstWriteErr != nil {
		t.Fatalf("writing: %v", firstWriteErr)
	}
	mu.Lock()
	wantEvents, wantMessages := maps.Clone(events), maps.Clone(messages)
	mu.Unlock()
	readers.awaitAndCheck(t, ctx, wantEvents, wantMessages)
}

// appendMaybeInTx appends st with Append, or with AppendTx in a transaction
// of the test that it commits or (rollback) rolls back.
func appendMaybeInTx(ctx context.Context, db *sql.DB, s *eventstore.Store, st eventstore.Stream, inTx, rollback bool) ([]int64, bool, error) {
	if !inTx {
		res, err := s.Append(ctx, st)
		return res.Positions, false, err
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return nil, false, err
	}
	res, err := s.AppendTx(ctx, tx, st)
	if err != nil {
		_ = tx.Rollback()
		return nil, false, err
	}
	if rollback {
		return nil, true, tx.Rollback()
	}
	return res.Positions, false, tx.Commit()
}

// provokeLogAhead, on PostgreSQL, draws each of seqs one value at a time in
// a loop until ctx ends, so nextval logs ahead (every 32 values) between
// the writers' draws; elsewhere it does nothing. Those positions stay
// gaps: no reader may receive them.
func provokeLogAhead(ctx context.Context, env *Env, wg *sync.WaitGroup, seqs ...string) {
	if env.Features.CounterPositions {
		return
	}
	for _, seq := range seqs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				if _, err := env.DB.ExecContext(ctx, `SELECT nextval('`+seq+`')`); err != nil {
					return
				}
			}
		}()
	}
}

// markReaders are the readers of testEveryReaderGetsEveryCommit.
type markReaders struct {
	follow, readAll, runnerEvents, topicFollow, runnerMessages *positionLog
	adv, tadv                                                  *hwm.Advancer
	errs                                                       chan error
}

func startMarkReaders(t T, ctx context.Context, wg *sync.WaitGroup, e *engine.Engine, s *eventstore.Store, tp *topic.Topic, adv, tadv *hwm.Advancer) *markReaders {
	t.Helper()
	m := &markReaders{
		follow: newPositionLog("event store Follow"), readAll: newPositionLog("event store ReadAll"),
		runnerEvents: newPositionLog("runner (event store)"), topicFollow: newPositionLog("capture Follow"),
		runnerMessages: newPositionLog("runner (capture topic)"), adv: adv, tadv: tadv, errs: make(chan error, 8),
	}
	reg := consumer.NewRegistry(e, nil)
	r, err := consumer.NewRunner(ctx, reg, consumer.Options{Type: "projection", Name: "every-reader", Workers: 4,
		Routes: []consumer.Route{
			consumer.On(consumer.EventStore(s, nil), func(_ context.Context, _ *sql.Tx, msg consumer.Msg[eventstore.Recorded]) error {
				return m.runnerEvents.add(msg.Position, false)
			}),
			consumer.On(consumer.Capture(tp, nil), func(_ context.Context, _ *sql.Tx, msg consumer.Msg[topic.Record]) error {
				return m.runnerMessages.add(msg.Position, false)
			}),
		}})
	if err != nil {
		t.Fatalf("NewRunner: %v", err)
	}
	run := func(name string, f func() error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := f(); err != nil && ctx.Err() == nil {
				m.errs <- fmt.Errorf("%s: %w", name, err)
			}
		}()
	}
	run("Follow", func() error {
		return s.Follow(ctx, 0, eventstore.FollowOptions{Waker: adv, PollInterval: 20 * time.Millisecond, PageSize: 50},
			func(r eventstore.Recorded) error { return m.follow.add(r.GlobalPosition, true) })
	})
	run("capture Follow", func() error {
		return tp.Follow(ctx, 0, topic.FollowOptions{Waker: tadv, PollInterval: 20 * time.Millisecond},
			func(r topic.Record) error { return m.topicFollow.add(r.Position, true) })
	})
	run("ReadAll", func() error {
		var last int64
		for ctx.Err() == nil {
			woken := adv.Changed()
			page, err := s.ReadAll(ctx, last, 50)
			if err != nil {
				return err
			}
			for _, r := range page {
				if err := m.readAll.add(r.GlobalPosition, true); err != nil {
					return err
				}
				last = r.GlobalPosition
			}
			if len(page) == 0 {
				select {
				case <-ctx.Done():
				case <-woken:
				case <-time.After(20 * time.Millisecond):
				}
			}
		}
		return nil
	})
	run("runner", func() error {
		for ctx.Err() == nil {
			n, err := r.Poll(ctx)
			if err != nil {
				return err
			}
			if n == 0 {
				time.Sleep(5 * time.Millisecond)
			}
		}
		return nil
	})
	return m
}

// awaitAndCheck waits until the marks pass every committed position and
// each reader has caught up, then checks what each received. A stream
// reader past the last commit that lacks a position has skipped it for
// good, so it fails at once; the runner, which reads partitions apart, is
// given until it stops applying anything.
func (m *markReaders) awaitAndCheck(t T, ctx context.Context, events, messages map[int64]bool) {
	t.Helper()
	lastOf := func(set map[int64]bool) int64 {
		var hi int64
		for p := range set {
			hi = max(hi, p)
		}
		return hi
	}
	hiE, hiM := lastOf(events), lastOf(messages)
	type want struct {
		l   *positionLog
		set map[int64]bool
		hi  int64
	}
	all := []want{{m.follow, events, hiE}, {m.readAll, events, hiE}, {m.topicFollow, messages, hiM},
		{m.runnerEvents, events, hiE}, {m.runnerMessages, messages, hiM}}
	for _, w := range all {
		for {
			m.adv.Nudge()
			m.tadv.Nudge()
			w.l.mu.Lock()
			past, n := w.l.last >= w.hi, len(w.l.got)
			w.l.mu.Unlock()
			if n >= len(w.set) || past && w.l != m.runnerEvents && w.l != m.runnerMessages {
				break
			}
			select {
			case err := <-m.errs:
				t.Fatalf("reader failed: %v", err)
			case <-ctx.Done():
				missing, _, _ := w.l.check(w.set)
				t.Fatalf("%s gave up with %d of %d committed positions; never received %s", w.l.name, n, len(w.set), ranges(missing))
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
	for _, w := range all {
		missing, twice, phantom := w.l.check(w.set)
		if len(missing) > 0 {
			t.Errorf("%s skipped committed positions %s (received %d of %d, up to %d)", w.l.name, ranges(missing), w.l.count(), len(w.set), w.hi)
		}
		if len(twice) > 0 {
			t.Errorf("%s received positions %v more than once", w.l.name, twice)
		}
		if len(phantom) > 0 {
			t.Errorf("%s received positions %v that no committed write returned", w.l.name, phantom)
		}
	}
	t.Logf("%d events and %d messages committed; every reader received each once", len(events), len(messages))
}

// ranges prints sorted positions as runs: "18122-18150, 18200".
func ranges(ps []int64) string {
	if len(ps) == 0 {
		return "none"
	}
	out := ""
	for i := 0; i < len(ps); {
		j := i
		for j+1 < len(ps) && ps[j+1] == ps[j]+1 {
			j++
		}
		if out != "" {
			out += ", "
		}
		if j > i {
			out += fmt.Sprintf("%d-%d", ps[i], ps[j])
		} else {
			out += fmt.Sprint(ps[i])
		}
		i = j + 1
	}
	return out
}
