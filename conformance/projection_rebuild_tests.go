package conformance

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/tidemarkdb/tidemark/core/consumer"
	"github.com/tidemarkdb/tidemark/core/eventstore"
	"github.com/tidemarkdb/tidemark/core/projection"
	"github.com/tidemarkdb/tidemark/core/schema"
	"github.com/tidemarkdb/tidemark/core/topic"
)

func projectionRebuildTests() []Test {
	return []Test{
		{"projection/rebuild_under_live_appends_equals_fresh_build", testRebuildLiveAppends},
		{"projection/rebuild_readers_see_old_models_until_switch", testRebuildReadersSeeOld},
		{"projection/rebuild_deletes_models_not_recreated", testRebuildDeletesStale},
		{"projection/rebuild_fences_poll_begun_before", testRebuildFencesOldPoll},
		{"projection/declaration_change_halts_accept_and_rebuild_clear", testRebuildDeclarationChanged},
		{"projection/rebuild_missing_history_halts", testRebuildMissingHistory},
		{"projection/rebuild_shadow_only_where_engine_creates_tables", testRebuildShadowWhereEngineCreates},
		{"projection/rebuild_begun_again_supersedes_the_first", testRebuildBegunAgain},
		{"projection/rebuild_consumer_rebuilding_until_switch", testRebuildStateDuringReplay},
		{"projection/rebuild_replay_reads_no_further_than_replay_through", testRebuildReplayBound},
		{"projection/rebuild_halted_replay_resumes_rebuilding", testRebuildHaltedReplayResumes},
	}
}

// testRebuildLiveAppends: a rebuild while events are appended ends with
// read models equal to those of a projection built from scratch over the
// same events (compared model by model).
func testRebuildLiveAppends(t T, env *Env) {
	r := newRBRig(t, env, rbName, "rb-fresh")
	ctx := rbCtx(t)
	st := r.open(t, rbProjection(rbName, rbSum(1), nil))
	want := map[string]rbTotal{}
	add := func(id string, n int64) {
		r.add(t, id, n)
		m := want[id]
		m.Total += n
		m.Events++
		want[id] = m
	}
	for i := range 20 {
		add(fmt.Sprintf("k-%02d", i), int64(i+1))
	}
	r.run(t, r.options(t, st))
	waitModels(t, "the first build", st, want)
	appended := make(chan struct{})
	extra := map[string]int64{}
	for i := range 30 {
		extra[fmt.Sprintf("k-%02d#%d", i%25, i)] = int64(100 + i)
	}
	var appendErr error
	go func() {
		defer close(appended)
		for i := range 30 {
			id := fmt.Sprintf("k-%02d", i%25)
			if _, err := r.s.Append(context.Background(), eventstore.Stream{AggregateType: "rb.Counter", AggregateID: id,
				Events: []eventstore.Event{{Type: "rbAdded", Payload: []byte(fmt.Sprintf(`{"n":%d}`, 100+i))}}}); err != nil {
				appendErr = err
				return
			}
		}
	}()
	if err := st.Rebuild(ctx); err != nil {
		t.Fatalf("Rebuild: %v", err)
	}
	<-appended
	if appendErr != nil {
		t.Fatalf("appending during the rebuild: %v", appendErr)
	}
	for k, n := range extra {
		id, _, _ := strings.Cut(k, "#")
		m := want[id]
		m.Total += n
		m.Events++
		want[id] = m
	}
	fresh := r.open(t, rbProjection("rb-fresh", rbSum(1), nil))
	r.run(t, r.options(t, fresh))
	waitModels(t, "the from-scratch build", fresh, want)
	waitModels(t, "the rebuilt read models", st, want)
	rebuilt, scratch := rbModels(t, st), rbModels(t, fresh)
	for k, v := range scratch {
		if rebuilt[k] != v {
			t.Errorf("read model %s: rebuilt %+v, from scratch %+v", k, rebuilt[k], v)
		}
	}
	if len(rebuilt) != len(scratch) {
		t.Errorf("%d rebuilt read models, %d from scratch", len(rebuilt), len(scratch))
	}
	// One switch: the begin raised the epoch to 1, the switch to 2 (the
	// runner's and Rebuild's switch attempts race; only one writes).
	if rp, err := r.reg.ReplayOf(ctx, r.e.DB, r.consumer(t, rbName).ID); err != nil || rp.Replaying || rp.Epoch != 2 {
		t.Errorf("after the rebuild: replay %+v (%v), want none in progress under epoch 2", rp, err)
	}
}

// testRebuildReadersSeeOld: while a rebuild replays (its switch held
// back), readers get the read models as they were before it, though the
// listener changed and the replay caught up; after the switch they get the
// new ones.
func testRebuildReadersSeeOld(t T, env *Env) {
	r := newRBRig(t, env, rbName)
	ctx := rbCtx(t)
	st1 := r.open(t, rbProjection(rbName, rbSum(1), nil))
	old, next := map[string]rbTotal{}, map[string]rbTotal{}
	for i := range 5 {
		id := fmt.Sprintf("k-%d", i)
		r.add(t, id, 1, 2)
		old[id], next[id] = rbTotal{Total: 3, Events: 2}, rbTotal{Total: 30, Events: 2}
	}
	stop := r.run(t, r.options(t, st1))
	waitModels(t, "the first build", st1, old)
	stop()
	st2 := r.open(t, rbProjection(rbName, rbSum(10), nil)) // the listener changed, not the declaration
	epoch, err := st2.BeginRebuild(ctx)
	if err != nil {
		t.Fatalf("BeginRebuild: %v", err)
	}
	opts := r.options(t, st2)
	opts.AfterPoll = nil // replays; the test switches
	stop = r.run(t, opts)
	id := r.consumer(t, rbName).ID
	waitFor(t, "the replay caught up", func() bool {
		rp, err := r.reg.ReplayOf(ctx, r.e.DB, id)
		return err == nil && rp.Replaying && rp.CaughtUp
	})
	if got := rbModels(t, st2); fmt.Sprint(got) != fmt.Sprint(old) {
		t.Errorf("during the rebuild readers see %v, want the old read models %v", got, old)
	}
	if v, ok, err := st2.Get(ctx, "k-0"); err != nil || !ok || v.Total != 3 {
		t.Errorf("Get(k-0) during the rebuild = %+v, %v, %v; want total 3 (before the rebuild)", v, ok, err)
	}
	if n, err := st2.Count(ctx, projection.Eq("total", 30)); err != nil || n != 0 {
		t.Errorf("Count(total = 30) during the rebuild = %d (%v), want 0", n, err)
	}
	// Compaction would delete the states the live rows point at (the
	// replay's newer ones supersede them): refused until the switch.
	if _, err := st2.Topic().Compact(ctx, topic.CompactOptions{}); !errors.Is(err, topic.ErrRebuilding) {
		t.Errorf("Compact during the rebuild: %v, want ErrRebuilding", err)
	}
	if v, ok, err := st2.Get(ctx, "k-1"); err != nil || !ok || v.Total != 3 {
		t.Errorf("Get(k-1) after the refused compaction = %+v, %v, %v; want total 3", v, ok, err)
	}
	done, err := st2.CompleteRebuild(ctx, epoch)
	if err != nil || !done {
		t.Fatalf("CompleteRebuild = %v, %v; want the switch", done, err)
	}
	if got := rbModels(t, st2); fmt.Sprint(got) != fmt.Sprint(next) {
		t.Errorf("after the switch readers see %v, want the new read models %v", got, next)
	}
	if _, err := st2.Topic().Compact(ctx, topic.CompactOptions{}); err != nil {
		t.Errorf("Compact after the switch: %v", err)
	}
	if got := rbModels(t, st2); fmt.Sprint(got) != fmt.Sprint(next) {
		t.Errorf("after compaction readers see %v, want %v", got, next)
	}
	stop()
}

// testRebuildDeletesStale: read models the replay does not create again
// are deleted at the switch, with their READ_MODEL_EPOCHS rows; the rows of
// the others carry the replay's epoch.
func testRebuildDeletesStale(t T, env *Env) {
	r := newRBRig(t, env, rbName)
	ctx := rbCtx(t)
	st1 := r.open(t, rbProjection(rbName, rbSum(1), nil))
	all := map[string]rbTotal{}
	for _, id := range []string{"keep-0", "keep-1", "keep-2", "gone-0", "gone-1"} {
		r.add(t, id, 5)
		all[id] = rbTotal{Total: 5, Events: 1}
	}
	stop := r.run(t, r.options(t, st1))
	waitModels(t, "the first build", st1, all)
	stop()
	st2 := r.open(t, rbProjection(rbName, func(id string, n int64, s *rbTotal) error {
		if strings.HasPrefix(id, "gone-") {
			return projection.Delete
		}
		return rbSum(1)(id, n, s)
	}, nil))
	epoch, err := st2.BeginRebuild(ctx)
	if err != nil {
		t.Fatalf("BeginRebuild: %v", err)
	}
	r.run(t, r.options(t, st2))
	if err := st2.AwaitRebuild(ctx, epoch); err != nil {
		t.Fatalf("AwaitRebuild: %v", err)
	}
	got := rbModels(t, st2)
	for id := range all {
		_, present := got[id]
		if want := !strings.HasPrefix(id, "gone-"); present != want {
			t.Errorf("read model %s present after the switch: %v, want %v", id, present, want)
		}
	}
	if _, ok, err := st2.Get(ctx, "gone-0"); err != nil || ok {
		t.Errorf("Get(gone-0) after the switch = %v, %v; want none", ok, err)
	}
	rows, err := r.e.DB.QueryContext(ctx, "SELECT projection, read_model_key, epoch FROM "+r.e.Names.Shared["read_model_epochs_table"])
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var keys []string
	for rows.Next() {
		var p, k string
		var ep int64
		if err := rows.Scan(&p, &k, &ep); err != nil {
			t.Fatal(err)
		}
		if p != rbName {
			continue
		}
		keys = append(keys, k)
		if ep != epoch {
			t.Errorf("READ_MODEL_EPOCHS row of %s carries epoch %d, want the replay's %d", k, ep, epoch)
		}
	}
	sort.Strings(keys)
	if fmt.Sprint(keys) != "[keep-0 keep-1 keep-2]" {
		t.Errorf("READ_MODEL_EPOCHS rows of %s: %v, want keep-0..2", rbName, keys)
	}
}

// testRebuildMissingHistory: a replay whose source no longer holds its
// history from the beginning halts the consumer with MISSING_HISTORY and
// switches nothing: readers keep the old read models, the rebuild reports
// the halt.
func testRebuildMissingHistory(t T, env *Env) {
	r := newRBRig(t, env, rbName)
	ctx := rbCtx(t)
	st := r.open(t, rbProjection(rbName, rbSum(1), nil))
	old := map[string]rbTotal{}
	for i := range 3 {
		id := fmt.Sprintf("k-%d", i)
		r.add(t, id, 4)
		old[id] = rbTotal{Total: 4, Events: 1}
	}
	stop := r.run(t, r.options(t, st))
	waitModels(t, "the first build", st, old)
	stop()
	epoch, err := st.BeginRebuild(ctx)
	if err != nil {
		t.Fatalf("BeginRebuild: %v", err)
	}
	src := truncatedSource{consumer.EventStore(r.s, r.adv)}
	opts, err := st.Options(src)
	if err != nil {
		t.Fatalf("Options: %v", err)
	}
	opts.PollInterval = 20 * time.Millisecond
	r.run(t, opts)
	var herr *projection.RebuildHaltedError
	if err := st.AwaitRebuild(ctx, epoch); !errors.As(err, &herr) || herr.Reason != consumer.MissingHistory {
		t.Fatalf("AwaitRebuild = %v, want a *RebuildHaltedError with MISSING_HISTORY", err)
	}
	if c := r.consumer(t, rbName); c.State != consumer.Halted || c.HaltReason != consumer.MissingHistory {
		t.Errorf("consumer %s %s, want HALTED MISSING_HISTORY", c.State, c.HaltReason)
	}
	if done, err := st.CompleteRebuild(ctx, epoch); done || err != nil {
		t.Errorf("CompleteRebuild of the halted replay = %v, %v; want no switch", done, err)
	}
	if got := rbModels(t, st); fmt.Sprint(got) != fmt.Sprint(old) {
		t.Errorf("after the halted replay readers see %v, want the old read models %v", got, old)
	}
}

// testRebuildFencesOldPoll: a poll begun before the rebuild, its apply held
// inside the listener while the rebuild begins, moves no checkpoint the
// rebuild reset and writes no read model; the replay then applies its
// event exactly once.
func testRebuildFencesOldPoll(t T, env *Env) {
	if env.Catalogue.Locks.SerializesWriters {
		skipf(t, "%s runs one writer at a time: the held apply's transaction holds the write lock the rebuild's begin needs, so no poll can straddle it", env.Catalogue.Identity.Name)
	}
	r := newRBRig(t, env, rbName)
	ctx := rbCtx(t)
	st1 := r.open(t, rbProjection(rbName, rbSum(1), nil))
	r.add(t, "k-0", 1)
	r.add(t, "k-1", 2)
	stop := r.run(t, r.options(t, st1))
	waitModels(t, "the first build", st1, map[string]rbTotal{"k-0": {1, 1}, "k-1": {2, 1}})
	stop()
	entered, release := make(chan struct{}), make(chan struct{})
	held := false
	st2 := r.open(t, rbProjection(rbName, func(id string, n int64, s *rbTotal) error {
		if id == "k-0" && n == 100 && !held {
			held = true // one worker: no other apply runs meanwhile
			close(entered)
			<-release
		}
		return rbSum(1)(id, n, s)
	}, nil))
	pos := r.add(t, "k-0", 100)
	waitFor(t, "the mark past the held event", func() bool {
		m, err := r.s.Mark(ctx)
		return err == nil && m >= pos
	})
	opts := r.options(t, st2)
	opts.Workers, opts.AfterPoll = 1, nil
	run, err := consumer.NewRunner(ctx, r.reg, opts)
	if err != nil {
		t.Fatal(err)
	}
	polled := make(chan error, 1)
	go func() { _, err := run.Poll(ctx); polled <- err }()
	select {
	case <-entered:
	case <-ctx.Done():
		t.Fatalf("the poll never reached the held apply")
	}
	epoch, err := st2.BeginRebuild(ctx)
	if err != nil {
		close(release)
		t.Fatalf("BeginRebuild with a poll in flight: %v", err)
	}
	close(release)
	<-polled
	cps, err := r.reg.Checkpoints(ctx, r.consumer(t, rbName).ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, cp := range cps {
		if cp.Recorded || cp.Epoch != epoch {
			t.Errorf("checkpoint %s/%d after the old poll: position %d (recorded %v) epoch %d, want none under epoch %d",
				cp.Source, cp.Partition, cp.Position, cp.Recorded, cp.Epoch, epoch)
		}
	}
	if v, ok, err := st2.Get(ctx, "k-0"); err != nil || !ok || v != (rbTotal{1, 1}) {
		t.Errorf("k-0 after the old poll = %+v, %v, %v; want {1 1}: the held apply wrote nothing", v, ok, err)
	}
	r.run(t, r.options(t, st2))
	if err := st2.AwaitRebuild(ctx, epoch); err != nil {
		t.Fatalf("AwaitRebuild: %v", err)
	}
	waitModels(t, "the rebuilt read models", st2, map[string]rbTotal{"k-0": {101, 2}, "k-1": {2, 1}})
}

// testRebuildDeclarationChanged: a declaration whose fingerprint differs
// from the stored one is refused at Open with DECLARATION_CHANGED (the
// consumer halted, its status says why); Accept clears it (the previous
// fingerprint kept after ";"); a later change is cleared by a rebuild,
// which stores the new fingerprint at its switch.
func testRebuildDeclarationChanged(t T, env *Env) {
	r := newRBRig(t, env, rbName)
	ctx := rbCtx(t)
	st1 := r.open(t, rbProjection(rbName, rbSum(1), nil))
	r.add(t, "k-0", 7)
	stop := r.run(t, r.options(t, st1))
	waitModels(t, "the first build", st1, map[string]rbTotal{"k-0": {7, 1}})
	stop()
	withListener := func(eventType string) func(*projection.Projection[rbTotal]) {
		return func(p *projection.Projection[rbTotal]) {
			projection.OnType(p, eventType, func(projection.Event[struct{}], *rbTotal) error { return nil })
		}
	}
	p2 := rbProjection(rbName, rbSum(1), withListener("rbReset"))
	id := r.consumer(t, rbName).ID
	expectChanged := func(p *projection.Projection[rbTotal]) {
		t.Helper()
		_, err := projection.Open(ctx, r.e, p)
		var dce *projection.DeclarationChangedError
		if !errors.As(err, &dce) || !errors.Is(err, projection.ErrDeclarationChanged) || fmt.Sprint(dce.Parts) != "[listeners]" {
			t.Fatalf("Open of a changed declaration = %v, want a *DeclarationChangedError naming [listeners]", err)
		}
		if c := r.consumer(t, rbName); c.State != consumer.Halted || c.HaltReason != consumer.DeclarationChanged {
			t.Fatalf("consumer %s %s after the change, want HALTED DECLARATION_CHANGED", c.State, c.HaltReason)
		}
	}
	expectChanged(p2)
	if err := projection.Accept(ctx, r.e, p2); err != nil {
		t.Fatalf("Accept: %v", err)
	}
	st2 := r.open(t, p2)
	fp, err := r.reg.Fingerprint(ctx, r.e.DB, id)
	if err != nil || fp != st2.Fingerprint()+";"+st1.Fingerprint() {
		t.Errorf("fingerprint after Accept %q (%v), want %q;%q", fp, err, st2.Fingerprint(), st1.Fingerprint())
	}
	if c := r.consumer(t, rbName); c.State != consumer.Running {
		t.Errorf("consumer %s after Accept, want running", c.State)
	}
	p3 := rbProjection(rbName, rbSum(2), withListener("rbCleared"))
	expectChanged(p3)
	rebuilt := make(chan error, 1)
	go func() { rebuilt <- projection.Rebuild(ctx, r.e, p3) }()
	var st3 *projection.Store[rbTotal]
	waitFor(t, "Open once the rebuild began", func() bool {
		st3, err = projection.Open(ctx, r.e, p3)
		return err == nil
	})
	r.run(t, r.options(t, st3))
	if err := <-rebuilt; err != nil {
		t.Fatalf("Rebuild: %v", err)
	}
	fp, err = r.reg.Fingerprint(ctx, r.e.DB, id)
	if err != nil || fp != st3.Fingerprint()+";"+st2.Fingerprint() {
		t.Errorf("fingerprint after the rebuild %q (%v), want %q;%q", fp, err, st3.Fingerprint(), st2.Fingerprint())
	}
	if c := r.consumer(t, rbName); c.State != consumer.Running {
		t.Errorf("consumer %s after the rebuild, want running", c.State)
	}
	r.open(t, p3)
	waitModels(t, "the rebuilt read models", st3, map[string]rbTotal{"k-0": {14, 1}})
}

// testRebuildShadowWhereEngineCreates: the shadow table is created by Open
// only on an engine that may create tables; on one opened on an existing
// schema (the operator's) Open creates none and a rebuild is refused with
// ErrNoShadow before it changes anything, until a writable store made it.
func testRebuildShadowWhereEngineCreates(t T, env *Env) {
	r := newRBRig(t, env, rbName)
	ctx := rbCtx(t)
	p := rbProjection(rbName, rbSum(1), nil)
	cfg := defaultConfig(env)
	cfg.QueryTables = append(cfg.QueryTables, p.QueryTable())
	cfg.Existing, cfg.Partitions = true, 0
	ex := openEngine(t, env, cfg)
	qt, err := ex.QueryTable(rbName)
	if err != nil {
		t.Fatal(err)
	}
	shadow, err := schema.DerivedName(&env.Catalogue, qt.Table+"_rb")
	if err != nil {
		t.Fatal(err)
	}
	st, err := projection.Open(ctx, ex, p)
	if err != nil {
		t.Fatalf("projection.Open on the Existing engine: %v", err)
	}
	if ok, err := schema.TableExists(ctx, env.DB, &env.Catalogue, shadow); err != nil || ok {
		t.Fatalf("shadow table %s after Open on the Existing engine: exists %v (%v), want none", shadow, ok, err)
	}
	r.add(t, "k-0", 1)
	stop := r.run(t, r.options(t, st))
	waitModels(t, "the first build", st, map[string]rbTotal{"k-0": {1, 1}})
	stop()
	if _, err := st.BeginRebuild(ctx); !errors.Is(err, projection.ErrNoShadow) {
		t.Fatalf("BeginRebuild without the shadow: %v, want ErrNoShadow", err)
	}
	if c := r.consumer(t, rbName); c.Epoch != 0 {
		t.Errorf("the refused rebuild raised the epoch to %d", c.Epoch)
	}
	r.open(t, p) // a writable engine's store creates it
	if ok, err := schema.TableExists(ctx, env.DB, &env.Catalogue, shadow); err != nil || !ok {
		t.Fatalf("shadow table %s after Open on a writable engine: exists %v (%v)", shadow, ok, err)
	}
	r.run(t, r.options(t, st))
	if err := st.Rebuild(ctx); err != nil {
		t.Fatalf("Rebuild on the Existing engine once the shadow exists: %v", err)
	}
	waitModels(t, "the rebuilt read models", st, map[string]rbTotal{"k-0": {1, 1}})
}

// testRebuildBegunAgain: a rebuild begun while another replays supersedes
// it (its epoch fences the first's applies); the first's wait reports it
// is no longer in progress, the second switches, and the runner goes on
// applying afterwards.
func testRebuildBegunAgain(t T, env *Env) {
	r := newRBRig(t, env, rbName)
	ctx := rbCtx(t)
	st := r.open(t, rbProjection(rbName, rbSum(1), nil))
	want := map[string]rbTotal{}
	for i := range 5 {
		id := fmt.Sprintf("k-%d", i)
		r.add(t, id, 2)
		want[id] = rbTotal{Total: 2, Events: 1}
	}
	stop := r.run(t, r.options(t, st))
	waitModels(t, "the first build", st, want)
	stop()
	first, err := st.BeginRebuild(ctx)
	if err != nil {
		t.Fatalf("BeginRebuild: %v", err)
	}
	second, err := st.BeginRebuild(ctx)
	if err != nil || second != first+1 {
		t.Fatalf("BeginRebuild during a replay = %d, %v; want epoch %d", second, err, first+1)
	}
	r.run(t, r.options(t, st))
	if err := st.AwaitRebuild(ctx, second); err != nil {
		t.Fatalf("AwaitRebuild of the second rebuild: %v", err)
	}
	if err := st.AwaitRebuild(ctx, first); !errors.Is(err, consumer.ErrNotReplaying) {
		t.Errorf("AwaitRebuild of the superseded rebuild: %v, want ErrNotReplaying", err)
	}
	r.add(t, "k-0", 5)
	want["k-0"] = rbTotal{Total: 7, Events: 2}
	waitModels(t, "the read models after the switch, with a later event", st, want)
	if c := r.consumer(t, rbName); c.Epoch != second+1 || c.State != consumer.Running {
		t.Errorf("consumer %s under epoch %d after the second rebuild, want running under %d", c.State, c.Epoch, second+1)
	}
}
