package conformance

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"hash/fnv"
	"sync"
	"time"

	"github.com/tidemarkdb/tidemark/core/consumer"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/eventstore"
	"github.com/tidemarkdb/tidemark/internal/testtime"
)

// appliedTable is the read model of the runner tests: one row per apply,
// no key, so an apply made twice shows as two rows.
const appliedTable = "TM_CONSUMER_APPLIED"

func createApplied(t T, env *Env) {
	t.Helper()
	if _, err := env.DB.Exec(`CREATE TABLE ` + appliedTable + ` (pos BIGINT NOT NULL)`); err != nil {
		t.Fatalf("creating %s: %v", appliedTable, err)
	}
}

func insertApplied(ctx context.Context, tx *sql.Tx, pos int64) error {
	_, err := tx.ExecContext(ctx, fmt.Sprintf(`INSERT INTO %s (pos) VALUES (%d)`, appliedTable, pos))
	return err
}

// appliedCounts returns how often each position was applied.
func appliedCounts(t T, env *Env) map[int64]int {
	t.Helper()
	rows, err := env.DB.Query(`SELECT pos FROM ` + appliedTable)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[int64]int{}
	for rows.Next() {
		var p int64
		if err := rows.Scan(&p); err != nil {
			t.Fatal(err)
		}
		out[p]++
	}
	return out
}

// appendSpread appends n events round-robin over the aggregates and
// publishes them; it returns their positions.
func appendSpread(t T, s *eventstore.Store, e *engine.Engine, ids []string, n int) []int64 {
	t.Helper()
	var pos []int64
	for i := range n {
		res := appendAndPublish(t, s, e, eventstore.Stream{AggregateType: "test.Account", AggregateID: ids[i%len(ids)], Events: []eventstore.Event{ev("test.E", fmt.Sprintf(`{"i":%d}`, i))}})
		pos = append(pos, res.Positions...)
	}
	return pos
}

// pollUntil polls until cond holds (a bound against hanging, not a timed
// assertion).
func pollUntil(t T, r *consumer.Runner, cond func() bool) {
	t.Helper()
	for range 200 {
		if _, err := r.Poll(context.Background()); err != nil {
			t.Fatalf("poll: %v", err)
		}
		if cond() {
			return
		}
	}
	t.Fatalf("condition not reached after 200 polls")
}

func testConsumerRestart(t T, env *Env) {
	s, e := openStore(t, env)
	createApplied(t, env)
	ctx := context.Background()
	reg := consumer.NewRegistry(e, nil)
	// Three keys of one partition on different workers, so later positions
	// of other keys are in flight when the poison fails.
	ids := samePartitionKeys(e.Partitions, 3)
	positions := appendSpread(t, s, e, append(ids, "r-other"), 32)
	poison := positions[13]
	src := consumer.EventStore(s, nil)
	laterRan := make(chan struct{})
	var laterOnce sync.Once
	handler := func(failAt int64) consumer.Handler[eventstore.Recorded] {
		return func(ctx context.Context, tx *sql.Tx, m consumer.Msg[eventstore.Recorded]) error {
			if m.Position > failAt && failAt > 0 && m.Partition == partitionOf(ids[0], e.Partitions) {
				laterOnce.Do(func() { close(laterRan) })
			}
			if m.Position == failAt && !env.Catalogue.Locks.SerializesWriters {
				// Fail once a later position of the partition is being
				// applied (bounded: a guard against hanging). An engine
				// with one writer at a time runs a later apply only after
				// this one ended.
				select {
				case <-laterRan:
				case <-testtime.After(30 * time.Second):
				}
			}
			if m.Position == failAt {
				return errors.New("poison")
			}
			return insertApplied(ctx, tx, m.Position)
		}
	}
	// A budget of one attempt: the poison's first failure spends it and
	// the HALT policy halts the consumer at once (the budget's own tests are
	// in consumer_delivery_tests.go).
	opts := consumer.Options{Type: "projection", Name: "restart", Transactional: true, PageSize: 4,
		Retry: consumer.RetryPolicy{MaxAttempts: 1}}
	opts.Routes = []consumer.Route{consumer.On(src, handler(poison))}
	r1, err := consumer.NewRunner(ctx, reg, opts)
	if err != nil {
		t.Fatal(err)
	}
	pollUntil(t, r1, func() bool { return mustConsumer(t, reg, r1.Consumer().ID).State == consumer.Halted })
	c := mustConsumer(t, reg, r1.Consumer().ID)
	if c.HaltReason != consumer.ApplyError {
		t.Errorf("halted for %q, want APPLY_ERROR", c.HaltReason)
	}
	// What committed with its checkpoint must never be applied again.
	cps, err := reg.Checkpoints(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	covered := map[int]int64{}
	for _, cp := range cps {
		covered[cp.Partition] = cp.Position
	}
	if appliedCounts(t, env)[poison] != 0 {
		t.Errorf("the poison position %d was applied", poison)
	}
	if err := reg.Resume(ctx, c.ID); err != nil {
		t.Fatal(err)
	}
	// A new runner (a restart) resumes after the checkpoints and retries the
	// HALTED poison (its row holds its key) with a fresh budget.
	opts.Routes = []consumer.Route{consumer.On(src, handler(-1))}
	r2, err := consumer.NewRunner(ctx, reg, opts)
	if err != nil {
		t.Fatal(err)
	}
	pollUntil(t, r2, func() bool { return len(appliedCounts(t, env)) == len(positions) })
	evs, err := s.ReadAll(ctx, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	part := map[int64]int{}
	for _, ev := range evs {
		part[ev.GlobalPosition] = ev.PartitionKey
	}
	// Every apply wrote in its checkpoint's transaction, so nothing that
	// committed before the failure is applied again after the restart.
	counts := appliedCounts(t, env)
	for _, p := range positions {
		if counts[p] != 1 {
			t.Errorf("position %d applied %d times, want once (checkpoint of its partition at the failure: %d)", p, counts[p], covered[part[p]])
		}
	}
	checkpointsCover(t, reg, c.ID, positions, part)
	st, err := reg.Operator().Status(ctx, c.Ref())
	if err != nil {
		t.Fatalf("status: %v", err)
	}
	if len(st.Partitions) != e.Partitions {
		t.Fatalf("status has %d partitions, want %d", len(st.Partitions), e.Partitions)
	}
	for _, p := range st.Partitions {
		if p.Source != src.Name() || p.Mark == nil || *p.Mark != positions[len(positions)-1] || p.Lag != 0 && p.Checkpoint != nil && *p.Checkpoint != 0 {
			t.Errorf("status %+v: want source %s, mark %d, no lag on a partition with events", p, src.Name(), positions[len(positions)-1])
		}
	}
}

// checkpointsCover checks every partition's checkpoint reached its last
// position.
func checkpointsCover(t T, reg *consumer.Registry, id string, positions []int64, part map[int64]int) {
	t.Helper()
	last := map[int]int64{}
	for _, p := range positions {
		last[part[p]] = max(last[part[p]], p)
	}
	cps, err := reg.Checkpoints(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	for _, cp := range cps {
		if cp.Position < last[cp.Partition] {
			t.Errorf("checkpoint of partition %d at %d, its last event is %d", cp.Partition, cp.Position, last[cp.Partition])
		}
	}
}

func testPollBeforeRebuild(t T, env *Env) {
	s, e := openStore(t, env)
	createApplied(t, env)
	ctx := context.Background()
	reg := consumer.NewRegistry(e, nil)
	positions := appendSpread(t, s, e, []string{"f-1"}, 3)
	var r *consumer.Runner
	// The poll reads the consumer's epoch (0) first; the rebuild completes
	// while it reads the source, before any of its applies.
	src := &rebuildingSource{SourceOf: consumer.EventStore(s, nil), rebuild: func(ctx context.Context) error {
		_, err := reg.Rebuild(ctx, r.Consumer().ID)
		return err
	}}
	opts := consumer.Options{Type: "projection", Name: "fenced", Transactional: true, Workers: 1,
		Routes: []consumer.Route{consumer.On(src, func(ctx context.Context, tx *sql.Tx, m consumer.Msg[eventstore.Recorded]) error {
			return insertApplied(ctx, tx, m.Position)
		})}}
	r, err := consumer.NewRunner(ctx, reg, opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Poll(ctx); err != nil {
		t.Fatal(err)
	}
	if src.err != nil {
		t.Fatalf("rebuild: %v", src.err)
	}
	if n := len(appliedCounts(t, env)); n != 0 {
		t.Errorf("%d applies of the fenced poll committed, want 0", n)
	}
	cps, err := reg.Checkpoints(ctx, r.Consumer().ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, cp := range cps {
		if cp.Recorded || cp.Epoch != 1 {
			t.Errorf("checkpoint %d moved by a poll begun before the rebuild: position %d (recorded %v) epoch %d", cp.Partition, cp.Position, cp.Recorded, cp.Epoch)
		}
	}
	// The next poll runs under epoch 1 from the reset checkpoints.
	pollUntil(t, r, func() bool { return len(appliedCounts(t, env)) == len(positions) })
	for p, n := range appliedCounts(t, env) {
		if n != 1 {
			t.Errorf("position %d applied %d times", p, n)
		}
	}
}

// fnvKey is the FNV-1a hash of a key, to pick keys that land on different
// workers (the runner spreads keys by it).
func fnvKey(k string) uint32 {
	h := fnv.New32a()
	_, _ = h.Write([]byte(k))
	return h.Sum32()
}

func testConsumerKeyOrder(t T, env *Env) {
	s, e := openStore(t, env)
	ctx := context.Background()
	reg := consumer.NewRegistry(e, nil)
	const workers = 8
	// Keys on distinct workers, so a blocked key cannot hold the others.
	var ids []string
	used := map[int]bool{}
	for i := 0; len(ids) < 4; i++ {
		id := fmt.Sprintf("k-%d", i)
		w := consumer.WorkerOf("test.Account/"+id, workers)
		if !used[w] {
			used[w] = true
			ids = append(ids, id)
		}
	}
	positions := appendSpread(t, s, e, ids, 24)
	var mu sync.Mutex
	order := map[string][]int64{}
	otherApplied := make(chan struct{}, len(positions))
	blockedKey := "test.Account/" + ids[0]
	var released bool
	opts := consumer.Options{Type: "projection", Name: "ordered", Workers: workers,
		Routes: []consumer.Route{consumer.On(consumer.EventStore(s, nil), func(ctx context.Context, _ *sql.Tx, m consumer.Msg[eventstore.Recorded]) error {
			if m.Key == blockedKey && !released {
				// Hold the first key until another key applied: keys flow
				// concurrently. The bound only guards against a hang.
				select {
				case <-otherApplied:
				case <-testtime.After(30 * time.Second):
					return errors.New("no other key was applied while one key was in flight")
				}
				released = true
			}
			mu.Lock()
			order[m.Key] = append(order[m.Key], m.Position)
			mu.Unlock()
			if m.Key != blockedKey {
				otherApplied <- struct{}{}
			}
			return nil
		})}}
	r, err := consumer.NewRunner(ctx, reg, opts)
	if err != nil {
		t.Fatal(err)
	}
	pollUntil(t, r, func() bool {
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, o := range order {
			n += len(o)
		}
		return n >= len(positions)
	})
	if c := mustConsumer(t, reg, r.Consumer().ID); c.State != consumer.Running {
		t.Fatalf("consumer %s (%s)", c.State, c.HaltReason)
	}
	for k, o := range order {
		for i := 1; i < len(o); i++ {
			if o[i] <= o[i-1] {
				t.Errorf("key %s applied %d after %d", k, o[i], o[i-1])
			}
		}
		if len(o) != len(positions)/len(ids) {
			t.Errorf("key %s applied %d times, want %d", k, len(o), len(positions)/len(ids))
		}
	}
}

func testConsumerEmptyStretch(t T, env *Env) {
	s, e := openStore(t, env)
	ctx := context.Background()
	clock := newFakeClock()
	reg := consumer.NewRegistry(e, clock.Now)
	opts := consumer.Options{Type: "projection", Name: "sparse",
		Routes: []consumer.Route{consumer.On(consumer.EventStore(s, nil), func(context.Context, *sql.Tx, consumer.Msg[eventstore.Recorded]) error { return nil })}}
	r, err := consumer.NewRunner(ctx, reg, opts)
	if err != nil {
		t.Fatal(err)
	}
	pos := appendSpread(t, s, e, []string{"only-one"}, 3)
	mark := pos[len(pos)-1]
	evs, err := s.ReadAll(ctx, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	busy := evs[0].PartitionKey
	check := func(emptyAt int64, emptyRecorded bool) {
		t.Helper()
		cps, err := reg.Checkpoints(ctx, r.Consumer().ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, cp := range cps {
			want, rec := emptyAt, emptyRecorded
			if cp.Partition == busy {
				want, rec = mark, true
			}
			if cp.Position != want || cp.Recorded != rec {
				t.Errorf("partition %d: checkpoint %d (recorded %v), want %d (recorded %v)", cp.Partition, cp.Position, cp.Recorded, want, rec)
			}
		}
	}
	if _, err := r.Poll(ctx); err != nil {
		t.Fatal(err)
	}
	check(0, false) // applied: saved at once; empty: not yet
	clock.Add(59 * time.Second)
	if _, err := r.Poll(ctx); err != nil {
		t.Fatal(err)
	}
	check(0, false)
	clock.Add(time.Second)
	if _, err := r.Poll(ctx); err != nil {
		t.Fatal(err)
	}
	check(mark, true) // a minute on: the empty stretches are saved
}

// rebuildingSource runs a rebuild during its first read: the poll reading
// it began under the epoch before.
type rebuildingSource struct {
	consumer.SourceOf[eventstore.Recorded]
	once    sync.Once
	rebuild func(context.Context) error
	err     error
}

func (s *rebuildingSource) Read(ctx context.Context, partition int, after, upto int64, limit int) ([]consumer.Message, error) {
	s.once.Do(func() { s.err = s.rebuild(ctx) })
	return s.SourceOf.Read(ctx, partition, after, upto, limit)
}

// ReadRangeMarked runs the rebuild during the range read of every
// partition (the runner's read when it holds them all); the source it
// wraps must be a RangeReader.
func (s *rebuildingSource) ReadRangeMarked(ctx context.Context, after, upto int64, limit int) ([]consumer.Message, int64, error) {
	s.once.Do(func() { s.err = s.rebuild(ctx) })
	return s.SourceOf.(consumer.RangeReader).ReadRangeMarked(ctx, after, upto, limit)
}

// partitionOf is the spec's partition of an aggregate id: FNV-1a (32 bits)
// of its UTF-8 bytes modulo the partition count.
func partitionOf(id string, partitions int) int {
	return int(fnvKey(id) % uint32(partitions))
}

// samePartitionKeys returns n aggregate ids of one partition whose keys
// ("test.Account/" + id) land on different workers of a 4-worker runner.
func samePartitionKeys(partitions, n int) []string {
	byPart := map[int][]string{}
	workers := map[int]map[int]bool{}
	for i := 0; ; i++ {
		id := fmt.Sprintf("r-%d", i)
		p := partitionOf(id, partitions)
		w := consumer.WorkerOf("test.Account/"+id, 4)
		if workers[p] == nil {
			workers[p] = map[int]bool{}
		}
		if workers[p][w] {
			continue
		}
		workers[p][w] = true
		byPart[p] = append(byPart[p], id)
		if len(byPart[p]) == n {
			return byPart[p]
		}
	}
}
