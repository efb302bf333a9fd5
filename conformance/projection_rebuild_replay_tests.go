package conformance

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/tidemarkdb/tidemark/core/consumer"
	"github.com/tidemarkdb/tidemark/core/projection"
	"github.com/tidemarkdb/tidemark/core/schema"
)

// The projection/rebuild_* tests of the replay's state and bound
// (registered in projection_rebuild_tests.go).

// testRebuildStateDuringReplay: while a rebuild replays (held inside the
// replay's first apply), the consumer is REBUILDING for every reader (the
// registry, the operator's status, the projection's status); the switch
// makes it run again under the next epoch, and later events are applied
// live.
func testRebuildStateDuringReplay(t T, env *Env) {
	r := newRBRig(t, env, rbName)
	ctx := rbCtx(t)
	st1 := r.open(t, rbProjection(rbName, rbSum(1), nil))
	r.add(t, "k-0", 1)
	r.add(t, "k-1", 2)
	stop := r.run(t, r.options(t, st1))
	waitModels(t, "the first build", st1, map[string]rbTotal{"k-0": {1, 1}, "k-1": {2, 1}})
	stop()
	entered, release := make(chan struct{}), make(chan struct{})
	var hold, freed sync.Once
	st2 := r.open(t, rbProjection(rbName, func(id string, n int64, s *rbTotal) error {
		hold.Do(func() { close(entered); <-release })
		return rbSum(1)(id, n, s)
	}, nil))
	epoch, err := st2.BeginRebuild(ctx)
	if err != nil {
		t.Fatalf("BeginRebuild: %v", err)
	}
	opts := r.options(t, st2)
	opts.Workers = 1
	r.run(t, opts)
	free := func() { freed.Do(func() { close(release) }) }
	t.Cleanup(free) // before the runner's stop (cleanups run last first)
	select {
	case <-entered:
	case <-ctx.Done():
		t.Fatalf("the replay never reached its first apply")
	}
	ref := consumer.Ref{Type: projection.ConsumerType, Name: rbName}
	if c := r.consumer(t, rbName); c.State != consumer.Rebuilding || c.Epoch != epoch {
		t.Errorf("consumer %s under epoch %d during the replay, want REBUILDING under %d", c.State, c.Epoch, epoch)
	}
	if cs, err := r.reg.Operator().Status(ctx, ref); err != nil || cs.State != consumer.Rebuilding {
		t.Errorf("operator status during the replay: %s (%v), want REBUILDING", cs.State, err)
	}
	ps, err := projection.StatusOf(ctx, r.reg.Operator(), rbName)
	if err != nil || ps.Consumer.State != consumer.Rebuilding || !ps.Replay.Replaying || ps.Replay.CaughtUp {
		t.Errorf("projection status during the replay: %s, replay %+v (%v); want REBUILDING, replaying, not caught up", ps.Consumer.State, ps.Replay, err)
	}
	free()
	if err := st2.AwaitRebuild(ctx, epoch); err != nil {
		t.Fatalf("AwaitRebuild: %v", err)
	}
	if c := r.consumer(t, rbName); c.State != consumer.Running || c.Epoch != epoch+1 {
		t.Errorf("consumer %s under epoch %d after the switch, want running under %d", c.State, c.Epoch, epoch+1)
	}
	r.add(t, "k-0", 5)
	waitModels(t, "the read models after the switch, with a later event", st2, map[string]rbTotal{"k-0": {6, 2}, "k-1": {2, 1}})
}

// testRebuildHaltedReplayResumes: a replay its runner halts (APPLY_ERROR:
// a listener failing with a budget of one attempt) is HALTED and switches
// nothing; resumed, it is REBUILDING again, the failing event is applied
// again and the replay switches.
func testRebuildHaltedReplayResumes(t T, env *Env) {
	r := newRBRig(t, env, rbName)
	ctx := rbCtx(t)
	st1 := r.open(t, rbProjection(rbName, rbSum(1), nil))
	r.add(t, "k-0", 1)
	r.add(t, "k-1", 2)
	stop := r.run(t, r.options(t, st1))
	old := map[string]rbTotal{"k-0": {1, 1}, "k-1": {2, 1}}
	waitModels(t, "the first build", st1, old)
	stop()
	var failing atomic.Bool
	failing.Store(true)
	st2 := r.open(t, rbProjection(rbName, func(id string, n int64, s *rbTotal) error {
		if id == "k-1" && failing.Load() {
			return errors.New("the listener fails until the test fixes it")
		}
		return rbSum(10)(id, n, s)
	}, nil))
	epoch, err := st2.BeginRebuild(ctx)
	if err != nil {
		t.Fatalf("BeginRebuild: %v", err)
	}
	opts := r.options(t, st2)
	opts.Retry = consumer.RetryPolicy{MaxAttempts: 1}
	r.run(t, opts)
	var herr *projection.RebuildHaltedError
	if err := st2.AwaitRebuild(ctx, epoch); !errors.As(err, &herr) || herr.Reason != consumer.ApplyError {
		t.Fatalf("AwaitRebuild = %v, want a *RebuildHaltedError with APPLY_ERROR", err)
	}
	c := r.consumer(t, rbName)
	if c.State != consumer.Halted || c.HaltReason != consumer.ApplyError || c.Epoch != epoch {
		t.Errorf("consumer %s %s under epoch %d after the failing replay, want HALTED APPLY_ERROR under %d", c.State, c.HaltReason, c.Epoch, epoch)
	}
	if got := rbModels(t, st2); fmt.Sprint(got) != fmt.Sprint(old) {
		t.Errorf("readers see %v after the halted replay, want the old %v", got, old)
	}
	failing.Store(false)
	if err := r.reg.Resume(ctx, c.ID); err != nil {
		t.Fatalf("Resume of the halted replay: %v", err)
	}
	if c := r.consumer(t, rbName); c.State != consumer.Rebuilding || c.Epoch != epoch {
		t.Errorf("consumer %s under epoch %d after the resume, want REBUILDING under %d", c.State, c.Epoch, epoch)
	}
	if err := st2.AwaitRebuild(ctx, epoch); err != nil {
		t.Fatalf("AwaitRebuild after the resume: %v", err)
	}
	if c := r.consumer(t, rbName); c.State != consumer.Running || c.Epoch != epoch+1 {
		t.Errorf("consumer %s under epoch %d after the switch, want running under %d", c.State, c.Epoch, epoch+1)
	}
	waitModels(t, "the rebuilt read models", st2, map[string]rbTotal{"k-0": {10, 1}, "k-1": {20, 1}})
}

// testRebuildReplayBound: a poll during the replay reads no source past its
// replay_through: events appended after the begin are delivered neither to
// the replay nor into the shadow, no checkpoint passes replay_through, and
// after the switch they are applied into the live read models, each once.
func testRebuildReplayBound(t T, env *Env) {
	r := newRBRig(t, env, rbName)
	ctx := rbCtx(t)
	st1 := r.open(t, rbProjection(rbName, rbSum(1), nil))
	old := map[string]rbTotal{}
	for i := range 3 {
		id := fmt.Sprintf("k-%d", i)
		r.add(t, id, int64(i+1))
		old[id] = rbTotal{Total: int64(i + 1), Events: 1}
	}
	stop := r.run(t, r.options(t, st1))
	waitModels(t, "the first build", st1, old)
	stop()
	var mu sync.Mutex
	var replayed []int64 // positions delivered before the switch
	var switched atomic.Bool
	st2 := r.open(t, rbProjectionAt(rbName, func(pos int64, id string, n int64, s *rbTotal) error {
		if !switched.Load() {
			mu.Lock()
			replayed = append(replayed, pos)
			mu.Unlock()
		}
		return rbSum(1)(id, n, s)
	}))
	epoch, err := st2.BeginRebuild(ctx)
	if err != nil {
		t.Fatalf("BeginRebuild: %v", err)
	}
	id := r.consumer(t, rbName).ID
	rp, err := r.reg.ReplayOf(ctx, r.e.DB, id)
	if err != nil || len(rp.Through) != 1 {
		t.Fatalf("the replay after its begin: %+v (%v), want one source", rp, err)
	}
	var through int64
	for _, v := range rp.Through {
		through = v
	}
	late := []int64{r.add(t, "k-0", 100), r.add(t, "k-new", 7)}
	waitFor(t, "the mark past the events appended after the begin", func() bool {
		m, err := r.s.Mark(ctx)
		return err == nil && m >= late[1]
	})
	opts := r.options(t, st2)
	opts.AfterPoll = nil // the test switches
	run, err := consumer.NewRunner(ctx, r.reg, opts)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the replay caught up", func() bool {
		if _, err := run.Poll(ctx); err != nil {
			t.Fatalf("Poll during the replay: %v", err)
		}
		rp, err := r.reg.ReplayOf(ctx, r.e.DB, id)
		return err == nil && rp.CaughtUp
	})
	if n, err := run.Poll(ctx); err != nil || n != 0 {
		t.Errorf("a poll of the caught-up replay applied %d (%v), want nothing", n, err)
	}
	checkReplayBound(t, r, st2, id, through, late, &mu, &replayed)
	switched.Store(true)
	if done, err := st2.CompleteRebuild(ctx, epoch); err != nil || !done {
		t.Fatalf("CompleteRebuild = %v, %v; want the switch", done, err)
	}
	want := map[string]rbTotal{"k-0": {101, 2}, "k-1": {2, 1}, "k-2": {3, 1}, "k-new": {7, 1}}
	var got map[string]rbTotal
	waitForOr(t, "the late events applied live after the switch", func() bool {
		if _, err := run.Poll(ctx); err != nil {
			t.Fatalf("Poll after the switch: %v", err)
		}
		got = rbModels(t, st2)
		return fmt.Sprint(got) == fmt.Sprint(want)
	}, func() string { return fmt.Sprintf("read models %v, want %v", got, want) })
	if c := r.consumer(t, rbName); c.State != consumer.Running || c.Epoch != epoch+1 {
		t.Errorf("consumer %s under epoch %d after the switch, want running under %d", c.State, c.Epoch, epoch+1)
	}
}

// checkReplayBound checks a caught-up replay bounded by through: nothing
// past it delivered or checkpointed, the shadow without the late events,
// readers on the old read models.
func checkReplayBound(t T, r *rbRig, st *projection.Store[rbTotal], id string, through int64, late []int64, mu *sync.Mutex, replayed *[]int64) {
	t.Helper()
	ctx := rbCtx(t)
	if late[0] <= through {
		t.Fatalf("the first late event at %d, not past replay_through %d", late[0], through)
	}
	mu.Lock()
	for _, pos := range *replayed {
		if pos > through {
			t.Errorf("the replay delivered position %d, past replay_through %d", pos, through)
		}
	}
	mu.Unlock()
	cps, err := r.reg.Checkpoints(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	for _, cp := range cps {
		if cp.Position > through {
			t.Errorf("checkpoint %s/%d at %d during the replay, past replay_through %d", cp.Source, cp.Partition, cp.Position, through)
		}
	}
	qt, err := r.e.QueryTable(rbName)
	if err != nil {
		t.Fatal(err)
	}
	shadow, err := schema.DerivedName(r.e.Cat, qt.Table+"_rb")
	if err != nil {
		t.Fatal(err)
	}
	var n, total int64
	if err := r.e.DB.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+shadow+" WHERE read_model_id = 'k-new'").Scan(&n); err != nil || n != 0 {
		t.Errorf("the shadow holds %d rows of k-new, appended after the begin (%v), want none", n, err)
	}
	if err := r.e.DB.QueryRowContext(ctx, "SELECT total FROM "+shadow+" WHERE read_model_id = 'k-0'").Scan(&total); err != nil || total != 1 {
		t.Errorf("the shadow's k-0 total %d (%v), want 1: the late event of k-0 is not replayed", total, err)
	}
	if v, ok, err := st.Get(ctx, "k-0"); err != nil || !ok || v != (rbTotal{1, 1}) {
		t.Errorf("Get(k-0) before the switch = %+v, %v, %v; want the old {1 1}", v, ok, err)
	}
	if _, ok, err := st.Get(ctx, "k-new"); err != nil || ok {
		t.Errorf("Get(k-new) before the switch = %v, %v; want none", ok, err)
	}
}

// rbProjectionAt is rbProjection (the same declaration) with a listener
// told the event's global position.
func rbProjectionAt(name string, fn func(pos int64, id string, n int64, s *rbTotal) error) *projection.Projection[rbTotal] {
	p := projection.New[rbTotal](name, nil)
	projection.OnType(p, "rbAdded", func(e projection.Event[rbAdded], s *rbTotal) error {
		return fn(e.Recorded.GlobalPosition, e.Recorded.AggregateID, e.Value.N, s)
	})
	projection.Field(p, "total", projection.Integer, func(s *rbTotal) int64 { return s.Total })
	return p
}
