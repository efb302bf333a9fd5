package conformance

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tidemarkdb/tidemark/core/consumer"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/eventstore"
	"github.com/tidemarkdb/tidemark/internal/sqlcount"
)

func consumerPollTests() []Test {
	return []Test{
		{"consumer/poll_reads_partitions_in_one_range", testConsumerPollCost},
		{"consumer/partitions_apart_applied_once_in_order", func(t T, env *Env) { testPartitionsApart(t, env, 100, false) }},
		{"consumer/partitions_pages_apart_applied_once_in_order", func(t T, env *Env) { testPartitionsApart(t, env, 1, false) }},
		{"consumer/partitions_apart_transactional_applied_once", func(t T, env *Env) { testPartitionsApart(t, env, 2, true) }},
		{"consumer/poll_failed_after_last_wakeup_retried", testPollFailedAfterLastWakeup},
		{"consumer/rebuild_fence_reads_bounded_by_window", testFenceReadsBounded},
		{"consumer/tx_batch_chunks_applied_once_poison_alone", testTxBatchChunks},
		{"consumer/catch_up_reads_next_page_while_applying", testReadsAhead},
		{"consumer/catch_up_reads_ahead_over_position_gaps", testReadsAheadOverGaps},
	}
}

// idPerPartition returns one new aggregate id in each of e's partitions,
// by partition.
func idPerPartition(t T, e *engine.Engine) []string {
	t.Helper()
	ids := make([]string, e.Partitions)
	for left := e.Partitions; left > 0; {
		id := newID(t)
		if p := eventstore.PartitionKey(id, e.Partitions); ids[p] == "" {
			ids[p], left = id, left-1
		}
	}
	return ids
}

// pollLog records a runner's applies in order.
type pollLog struct {
	mu    sync.Mutex
	order []consumer.Msg[eventstore.Recorded]
}

func (l *pollLog) handler(_ context.Context, _ *sql.Tx, m consumer.Msg[eventstore.Recorded]) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.order = append(l.order, m)
	return nil
}

func (l *pollLog) counts() map[int64]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[int64]int{}
	for _, m := range l.order {
		out[m.Position]++
	}
	return out
}

// startAtMark moves every checkpoint of r's consumer to the store's mark,
// so its first poll reads only what the test appends next.
func startAtMark(ctx context.Context, t T, reg *consumer.Registry, r *consumer.Runner, s *eventstore.Store) int64 {
	t.Helper()
	mark, err := s.Mark(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for p := range s.Engine().Partitions {
		if _, err := reg.Advance(ctx, nil, r.Consumer().ID, engine.EventStoreTopic, p, mark, 0); err != nil {
			t.Fatal(err)
		}
	}
	return mark
}

// testConsumerPollCost counts, through a counting driver, the statements
// of a poll that applies one event in every partition (P partitions, T
// event tables), non-Transactional: its bookkeeping (the consumer row,
// undelivered rows, skips, the mark, and as the runner's first poll its
// checkpoints and incomplete-history marks: 6 statements), one read
// transaction of every partition at once (BEGIN, the mark, one range query
// per event table, COMMIT: 3+T), the rebuild fence of each apply (at most
// the consumer row's epoch read before each handler: P; usually none, the
// poll's own read of the row serving within consumer.EpochWindow) and one
// transaction of checkpoint writes (P+2): 6 + (3+T) + P + (P+2), 30 with 8
// partitions and 3 event tables. Read and saved one partition at a time,
// the same poll costs 6 + P×(3+T) + P + P, 70.
func testConsumerPollCost(t T, env *Env) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var counts sqlcount.Counts
	counts.ByText = true
	e := countedEngine(t, env, defaultConfig(env), &counts)
	s := eventstore.New(e, nil)
	reg := consumer.NewRegistry(e, nil)
	var log pollLog
	r, err := consumer.NewRunner(ctx, reg, consumer.Options{Type: "projection", Name: "poll-cost",
		Routes: []consumer.Route{consumer.On(consumer.EventStore(s, nil), log.handler)}})
	if err != nil {
		t.Fatal(err)
	}
	startAtMark(ctx, t, reg, r, s)
	ids := idPerPartition(t, e)
	streams := make([]eventstore.Stream, len(ids))
	for i, id := range ids {
		streams[i] = eventstore.Stream{AggregateType: "test.Account", AggregateID: id, Events: []eventstore.Event{ev("test.E", `{}`)}}
	}
	appendAndPublish(t, s, e, streams...)
	before := counts.Total()
	counts.ResetTexts()
	n, err := r.Poll(ctx)
	if err != nil {
		t.Fatalf("poll: %v", err)
	}
	got := counts.Total() - before
	if n != len(ids) {
		t.Fatalf("the poll applied %d events, want %d (one per partition)", n, len(ids))
	}
	tables := int64(len(e.Names.EventTables))
	parts := int64(e.Partitions)
	// The bookkeeping, the range read (BEGIN, mark, T queries, COMMIT),
	// each apply's epoch fence, the checkpoint writes (BEGIN, P, COMMIT),
	// and two to spare for a dialect that sets a transaction up with a
	// statement of its own.
	limit := 6 + (3 + tables) + parts + (parts + 2) + 2
	if got > limit {
		t.Errorf("a poll applying one event in each of %d partitions sent %d statements, want at most %d", parts, got, limit)
	}
	t.Logf("statements of a poll applying one event in each of %d partitions (%d event tables): %d", parts, tables, got)
	for _, q := range counts.Texts() {
		t.Logf("%3d × %s", q.Count, q.SQL)
	}
}

// testFenceReadsBounded: a non-Transactional poll applying n events reads
// the consumer row for its rebuild fence at most once per
// consumer.EpochWindow per worker, not once per event: the poll's
// statements stay under its bookkeeping (see testConsumerPollCost), the
// range read, Workers × (1 + elapsed/EpochWindow) fence reads and the
// checkpoint writes, however long the poll took. Reading the row before
// every handler call sent n fence reads.
func testFenceReadsBounded(t T, env *Env) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var counts sqlcount.Counts
	e := countedEngine(t, env, defaultConfig(env), &counts)
	s := eventstore.New(e, nil)
	reg := consumer.NewRegistry(e, nil)
	var log pollLog
	const workers, batches, perBatch = 4, 4, 100
	r, err := consumer.NewRunner(ctx, reg, consumer.Options{Type: "projection", Name: "fence-reads",
		Workers: workers, PageSize: 2 * batches * perBatch,
		Routes: []consumer.Route{consumer.On(consumer.EventStore(s, nil), log.handler)}})
	if err != nil {
		t.Fatal(err)
	}
	startAtMark(ctx, t, reg, r, s)
	id := newID(t)
	for range batches {
		evs := make([]eventstore.Event, perBatch)
		for i := range evs {
			evs[i] = ev("test.E", `{}`)
		}
		appendAndPublish(t, s, e, eventstore.Stream{AggregateType: "test.Account", AggregateID: id, Events: evs})
	}
	before := counts.Total()
	start := time.Now()
	n, err := r.Poll(ctx)
	elapsed := time.Since(start)
	if err != nil {
		t.Fatalf("poll: %v", err)
	}
	if n != batches*perBatch {
		t.Fatalf("the poll applied %d events, want %d", n, batches*perBatch)
	}
	got := counts.Total() - before
	tables, parts := int64(len(e.Names.EventTables)), int64(e.Partitions)
	fence := int64(workers) * (1 + int64(elapsed/consumer.EpochWindow))
	limit := 6 + (3 + tables) + fence + (parts + 2) + 2
	if got > limit {
		t.Errorf("a poll applying %d events in %v sent %d statements, want at most %d (%d fence reads allowed)", n, elapsed, got, limit, fence)
	}
	t.Logf("a poll applying %d events in %v: %d statements (limit %d)", n, elapsed.Round(time.Millisecond), got, limit)
}

// testPartitionsApart starts a consumer with its partitions' checkpoints
// apart (partition 0 behind the others by a batch of events in every
// partition), then runs it with pageSize: with a large page the runner
// reads every partition at once from partition 0's position, with a page
// of 1 the partitions are pages apart and partition 0 is read on its own
// until it is within a page of the others. Either way every event above
// its partition's checkpoint is applied once, those below never, and every
// key's events in position order. Transactional (a page of 2: the range
// read is cut where a partition got a page), the applies are counted in
// the database, where an apply rolled back leaves nothing.
func testPartitionsApart(t T, env *Env, pageSize int, transactional bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, e := openStore(t, env)
	reg := consumer.NewRegistry(e, nil)
	var log pollLog
	handler := log.handler
	if transactional {
		createApplied(t, env)
		handler = func(ctx context.Context, tx *sql.Tx, m consumer.Msg[eventstore.Recorded]) error {
			return insertApplied(ctx, tx, m.Position)
		}
	}
	r, err := consumer.NewRunner(ctx, reg, consumer.Options{Type: "projection", Name: fmt.Sprintf("apart-%d", pageSize),
		Routes: []consumer.Route{consumer.On(consumer.EventStore(s, nil), handler)}, PageSize: pageSize, Transactional: transactional})
	if err != nil {
		t.Fatal(err)
	}
	startAtMark(ctx, t, reg, r, s)
	ids := idPerPartition(t, e)
	const perKey = 3
	first := appendSpread(t, s, e, ids, perKey*len(ids))
	// Every partition but 0 has applied the first batch.
	for p := 1; p < e.Partitions; p++ {
		if _, err := reg.Advance(ctx, nil, r.Consumer().ID, engine.EventStoreTopic, p, first[len(first)-1], 0); err != nil {
			t.Fatal(err)
		}
	}
	second := appendSpread(t, s, e, ids, perKey*len(ids))
	want := map[int64]bool{}
	for i, p := range first {
		if i%len(ids) == 0 { // ids[0], partition 0
			want[p] = true
		}
	}
	for _, p := range second {
		want[p] = true
	}
	applied := log.counts
	if transactional {
		applied = func() map[int64]int { return appliedCounts(t, env) }
	}
	pollUntil(t, r, func() bool { return len(applied()) >= len(want) })
	if _, err := r.Poll(ctx); err != nil { // nothing more may come
		t.Fatal(err)
	}
	counts := applied()
	for p, n := range counts {
		if !want[p] {
			t.Errorf("position %d applied %d times, want never (at or below its partition's checkpoint)", p, n)
		} else if n != 1 {
			t.Errorf("position %d applied %d times, want once", p, n)
		}
	}
	for p := range want {
		if counts[p] == 0 {
			t.Errorf("position %d never applied", p)
		}
	}
	last := map[string]int64{}
	log.mu.Lock()
	defer log.mu.Unlock()
	for _, m := range log.order {
		if m.Position <= last[m.Key] {
			t.Errorf("key %s: position %d applied after %d", m.Key, m.Position, last[m.Key])
		}
		last[m.Key] = m.Position
	}
}

// testTxBatchChunks: a Transactional runner with TxBatch applies a
// partition's messages in chunks, one commit each. A handler failing in
// the middle of a chunk rolls the chunk back (its write with it), the
// chunk's messages are applied one by one, and the failing message alone
// goes to the error policy (dead-lettered after one attempt): every other
// message is applied exactly once, the failing one never, and the polls
// commit far fewer transactions than messages.
func testTxBatchChunks(t T, env *Env) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var counts sqlcount.Counts
	counts.ByText = true
	e := countedEngine(t, env, defaultConfig(env), &counts)
	s := eventstore.New(e, nil)
	reg := consumer.NewRegistry(e, nil)
	createApplied(t, env)
	var poison atomic.Int64
	var poisonCalls atomic.Int32
	handler := func(ctx context.Context, tx *sql.Tx, m consumer.Msg[eventstore.Recorded]) error {
		if err := insertApplied(ctx, tx, m.Position); err != nil {
			return err
		}
		if m.Position == poison.Load() {
			poisonCalls.Add(1)
			return errors.New("poison")
		}
		return nil
	}
	const txBatch = 8
	r, err := consumer.NewRunner(ctx, reg, consumer.Options{Type: "projection", Name: "tx-batch",
		Transactional: true, TxBatch: txBatch, OnError: consumer.PolicyDeadLetter, Retry: consumer.RetryPolicy{MaxAttempts: 1},
		Routes: []consumer.Route{consumer.On(consumer.EventStore(s, nil), handler)}})
	if err != nil {
		t.Fatal(err)
	}
	startAtMark(ctx, t, reg, r, s)
	ids := idPerPartition(t, e)
	const perKey = 20
	positions := appendSpread(t, s, e, ids, perKey*len(ids))
	poison.Store(positions[5*len(ids)+1]) // ids[1]'s sixth event, inside a chunk
	counts.ResetTexts()
	want := len(positions) - 1
	pollUntil(t, r, func() bool { return len(appliedCounts(t, env)) >= want })
	got := appliedCounts(t, env)
	for _, p := range positions {
		switch n := got[p]; {
		case p == poison.Load() && n != 0:
			t.Errorf("the failing position %d left %d rows (its chunk rolled back, then it failed alone)", p, n)
		case p != poison.Load() && n != 1:
			t.Errorf("position %d applied %d times, want once", p, n)
		}
	}
	if n := poisonCalls.Load(); n < 2 {
		t.Errorf("the failing message's handler ran %d times, want its chunk's try and its own", n)
	}
	if c := r.Consumer(); c.State != consumer.Running {
		t.Errorf("consumer %s after a dead-lettered message, want running", c.State)
	}
	commits := int64(0)
	for _, q := range counts.Texts() {
		if strings.EqualFold(strings.TrimSpace(q.SQL), "COMMIT") {
			commits += q.Count
		}
	}
	if commits >= int64(len(positions))/2 {
		t.Errorf("%d messages in chunks of %d took %d commits, want fewer than %d", len(positions), txBatch, commits, len(positions)/2)
	}
	t.Logf("%d messages, chunks of %d: %d commits", len(positions), txBatch, commits)
}
