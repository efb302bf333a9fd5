package conformance

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/tidemarkdb/tidemark/core/eventstore"
)

func groupCommitTests() []Test {
	return []Test{
		{"eventstore/group_commit_per_caller", testGroupCommitPerCaller},
		{"eventstore/group_commit_cancel_queued", testGroupCommitCancelQueued},
		{"eventstore/group_commit_batches_form", testGroupCommitBatchesForm},
		{"eventstore/group_commit_panic_answers_callers", testGroupCommitPanicAnswersCallers},
		{"eventstore/group_commit_exact_conflicts", testGroupCommitExactConflicts},
		{"eventstore/group_commit_exact_one_statement", testGroupCommitExactOneStatement},
		{"eventstore/group_commit_nudges_committed_end", testGroupCommitNudgesCommittedEnd},
		{"hwm/interleaved_group_commit_tail_reader", testInterleavedGroupCommit},
	}
}

// gate is a Nudger that holds the first nudge after it is armed: the store
// nudges from the leader's goroutine right after a commit, before the lead
// passes on, so while the gate is shut the callers that arrive queue, and
// the test knows (GroupCommitStats.Queued) exactly which batch forms next.
// No timing: the batch is built by construction.
type gate struct {
	armed   atomic.Bool
	entered chan struct{}
	release chan struct{}
}

func newGate() *gate {
	g := &gate{entered: make(chan struct{}), release: make(chan struct{})}
	g.armed.Store(true)
	return g
}

func (g *gate) Nudge() {
	if g.armed.CompareAndSwap(true, false) {
		close(g.entered)
		<-g.release
	}
}

// call is one queued caller's append and outcome.
type call struct {
	ctx     context.Context
	streams []eventstore.Stream
	res     eventstore.Appended
	err     error
	done    chan struct{}
}

// queueBehindGate appends a lone stream that holds the gate, then queues
// calls one by one, in order (each waits until the previous is queued, so
// the queue's order is the calls' order). The caller releases the gate.
func queueBehindGate(t T, s *eventstore.Store, g *gate, calls []*call) {
	t.Helper()
	go func() {
		_, _ = s.Append(context.Background(), eventstore.Stream{AggregateType: "bank.Account", AggregateID: "gc-leader", Events: []eventstore.Event{ev("t.Lead", `{}`)}})
	}()
	waitFor(t, "the leader's nudge", func() bool {
		select {
		case <-g.entered:
			return true
		default:
			return false
		}
	})
	for i, c := range calls {
		c.done = make(chan struct{})
		if c.ctx == nil {
			c.ctx = context.Background()
		}
		go func() {
			defer close(c.done)
			c.res, c.err = s.Append(c.ctx, c.streams...)
		}()
		waitFor(t, fmt.Sprintf("caller %d queued", i), func() bool { return s.GroupCommitStats().Queued == i+1 })
	}
}

func one(id string, expected eventstore.ExpectedVersion, payloads ...string) eventstore.Stream {
	st := eventstore.Stream{AggregateType: "bank.Account", AggregateID: id, Expected: expected}
	for _, p := range payloads {
		st.Events = append(st.Events, ev("t.Group", p))
	}
	return st
}

// testGroupCommitPerCaller forms one batch of five callers: a caller whose
// second stream conflicts stores neither of its streams; a caller expecting
// the version an earlier caller of the same batch moved is refused alone;
// the others commit, each with its own positions (consecutive on a counter
// row, ascending where the insert draws them) and versions.
func testGroupCommitPerCaller(t T, env *Env) {
	e := openEngine(t, env, defaultConfig(env))
	ctx := context.Background()
	seed := eventstore.New(e, nil)
	if _, err := seed.Append(ctx, one("gc-moved", eventstore.NoStream, `{"v":0}`, `{"v":1}`)); err != nil {
		t.Fatalf("seeding: %v", err)
	}
	if _, err := seed.Append(ctx, one("gc-shared", eventstore.NoStream, `{"v":0}`)); err != nil {
		t.Fatalf("seeding: %v", err)
	}
	g := newGate()
	s := eventstore.New(e, g, eventstore.WithGroupCommit(true))
	calls := []*call{
		{streams: []eventstore.Stream{one("gc-a", eventstore.NoStream, `{"c":0}`), one("gc-moved", eventstore.Exactly(0), `{"c":0,"bad":1}`)}},
		{streams: []eventstore.Stream{one("gc-b", eventstore.NoStream, `{"c":1}`, `{"c":1,"n":2}`)}},
		{streams: []eventstore.Stream{one("gc-shared", eventstore.Exactly(0), `{"c":2}`)}},
		{streams: []eventstore.Stream{one("gc-shared", eventstore.Exactly(0), `{"c":3}`)}},
		{streams: []eventstore.Stream{one("gc-c", eventstore.Any, `{"c":4}`), one("gc-shared", eventstore.Exactly(1), `{"c":4}`)}},
	}
	queueBehindGate(t, s, g, calls)
	close(g.release)
	for _, c := range calls {
		<-c.done
	}
	if st := s.GroupCommitStats(); st.MaxCallers < int64(len(calls)) {
		t.Fatalf("the %d queued callers did not commit as one batch: %+v", len(calls), st)
	}
	ce := expectErr[*eventstore.ConcurrencyError](t, calls[0].err, "caller 0 (second stream conflicts)")
	if ce.AggregateID != "gc-moved" || ce.Actual != 1 {
		t.Errorf("caller 0: conflict on %s at %d, want gc-moved at 1", ce.AggregateID, ce.Actual)
	}
	ce = expectErr[*eventstore.ConcurrencyError](t, calls[3].err, "caller 3 (the earlier caller moved the stream)")
	if ce.Actual != 1 {
		t.Errorf("caller 3: actual %d, want 1 (the version caller 2 made in the same batch)", ce.Actual)
	}
	for _, i := range []int{1, 2, 4} {
		if calls[i].err != nil {
			t.Fatalf("caller %d: %v", i, calls[i].err)
		}
		checkOwnPositions(t, env, i, calls[i].res.Positions, countEvents(calls[i].streams))
	}
	if v := calls[4].res.Versions["bank.Account/gc-shared"]; v != 2 {
		t.Errorf("caller 4: gc-shared at version %d, want 2", v)
	}
	if v := calls[1].res.Versions["bank.Account/gc-b"]; v != 1 {
		t.Errorf("caller 1: gc-b at version %d, want 1", v)
	}
	for id, want := range map[string]int{"gc-a": 0, "gc-moved": 2, "gc-b": 2, "gc-shared": 3, "gc-c": 1} {
		got, err := s.Load(ctx, "bank.Account", id, -1)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != want {
			t.Errorf("stream %s holds %d events, want %d", id, len(got), want)
		}
	}
}

func countEvents(streams []eventstore.Stream) int {
	n := 0
	for _, st := range streams {
		n += len(st.Events)
	}
	return n
}

// checkOwnPositions: a caller's positions follow its own order, one per
// event, consecutive where a counter row allocates them for the batch.
func checkOwnPositions(t T, env *Env, caller int, pos []int64, events int) {
	t.Helper()
	if len(pos) != events {
		t.Fatalf("caller %d: %d positions for %d events", caller, len(pos), events)
	}
	for i := 1; i < len(pos); i++ {
		if pos[i] <= pos[i-1] || isCounter(env) && pos[i] != pos[i-1]+1 {
			t.Errorf("caller %d: positions %v not consecutive in its own order", caller, pos)
			return
		}
	}
}

// testGroupCommitCancelQueued: a caller whose ctx ends while it is queued
// leaves with ctx's error and stores nothing; the callers queued around it
// commit as one batch.
func testGroupCommitCancelQueued(t T, env *Env) {
	e := openEngine(t, env, defaultConfig(env))
	g := newGate()
	s := eventstore.New(e, g, eventstore.WithGroupCommit(true))
	cctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	calls := []*call{
		{streams: []eventstore.Stream{one("gq-a", eventstore.NoStream, `{}`)}},
		{ctx: cctx, streams: []eventstore.Stream{one("gq-b", eventstore.NoStream, `{}`)}},
		{streams: []eventstore.Stream{one("gq-c", eventstore.NoStream, `{}`)}},
	}
	queueBehindGate(t, s, g, calls)
	cancel()
	<-calls[1].done
	if !errors.Is(calls[1].err, context.Canceled) {
		t.Fatalf("cancelled caller: want context.Canceled, got %v", calls[1].err)
	}
	if q := s.GroupCommitStats().Queued; q != 2 {
		t.Fatalf("%d callers queued after the cancellation, want 2", q)
	}
	close(g.release)
	<-calls[0].done
	<-calls[2].done
	for _, i := range []int{0, 2} {
		if calls[i].err != nil {
			t.Fatalf("caller %d: %v", i, calls[i].err)
		}
	}
	if st := s.GroupCommitStats(); st.MaxCallers != 2 {
		t.Errorf("want the two remaining callers in one batch: %+v", st)
	}
	got, err := s.Load(context.Background(), "bank.Account", "gq-b", -1)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 0 {
		t.Errorf("the cancelled caller's event was stored")
	}
}

// testGroupCommitBatchesForm: 16 writers appending single events without
// any gate form batches of more than one caller at least once (the leader
// takes whatever queued during the previous commit), and every append
// lands once with its own position.
func testGroupCommitBatchesForm(t T, env *Env) {
	e := openEngine(t, env, defaultConfig(env))
	s := eventstore.New(e, nil, eventstore.WithGroupCommit(true))
	const writers, each = 16, 25
	var wg sync.WaitGroup
	var mu sync.Mutex
	seen := map[int64]bool{}
	var firstErr error
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				expected := eventstore.NoStream
				if i > 0 {
					expected = eventstore.Exactly(int64(i - 1))
				}
				res, err := s.Append(context.Background(), one(fmt.Sprintf("gf-%d", w), expected, fmt.Sprintf(`{"w":%d,"i":%d}`, w, i)))
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = fmt.Errorf("writer %d append %d: %w", w, i, err)
				}
				for _, p := range res.Positions {
					if seen[p] {
						firstErr = fmt.Errorf("position %d given twice", p)
					}
					seen[p] = true
				}
				mu.Unlock()
				if err != nil {
					return
				}
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		t.Fatal(firstErr)
	}
	st := s.GroupCommitStats()
	t.Logf("%d appends in %d transactions, at most %d callers in one", st.Callers, st.Batches, st.MaxCallers)
	if st.Callers != writers*each || len(seen) != writers*each {
		t.Fatalf("%d callers served, %d positions, want %d", st.Callers, len(seen), writers*each)
	}
	if st.MaxCallers < 2 {
		t.Fatalf("no batch of more than one caller formed under %d writers", writers)
	}
}

// testInterleavedGroupCommit is the interleaved-commit tail reader with
// its writers appending through group commit (16 of them): the batches
// keep global order and gaplessness, and each append's positions follow
// its own order. A run in which no batch formed proves nothing and fails.
func testInterleavedGroupCommit(t T, env *Env) {
	s := interleavedWith(t, env, true, defaultConfig(env), 16, eventstore.WithGroupCommit(true))
	st := s.GroupCommitStats()
	t.Logf("%d appends in %d transactions, at most %d callers in one", st.Callers, st.Batches, st.MaxCallers)
	if st.MaxCallers < 2 {
		t.Fatalf("no batch of more than one caller formed: the torture did not exercise group commit")
	}
}
