package conformance

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/tidemarkdb/tidemark/core/consumer"
	"github.com/tidemarkdb/tidemark/core/engine"
)

func consumerTests() []Test {
	return []Test{
		{"consumer/state_transitions", testConsumerStates},
		{"consumer/replay_rebuilding_until_its_switch", testConsumerReplayStates},
		{"consumer/errors_name_consumers_as_typed", testErrorsNameConsumers},
		{"consumer/source_names_differing_in_case_refused", testSourceNamesDifferingInCase},
		{"consumer/names_refused_where_collation_merges", testConsumerNames},
		{"consumer/names_case_insensitive_collation_refused", testConsumerNamesCaseInsensitive},
		{"consumer/checkpoint_monotonic_and_fenced_concurrent", testCheckpointConcurrent},
		{"consumer/poll_before_rebuild_fenced", testPollBeforeRebuild},
		{"consumer/restart_resumes_after_checkpoint", testConsumerRestart},
		{"consumer/per_key_order_concurrent_keys", testConsumerKeyOrder},
		{"consumer/empty_stretch_saved_once_a_minute", testConsumerEmptyStretch},
		{"consumer/run_woken_by_mark_graceful_stop", testConsumerRunWokenGracefulStop},
		{"consumer/torture_kill9_three_processes", testConsumerTorture},
		{"consumer/torture_one_consumer_three_processes_kill9", testConsumerSharedTorture},
		{"consumer/leases_spread_kill9_three_processes", testConsumerLeasesSpreadKill},
		{"consumer/leases_paused_apply_fenced", testConsumerLeasesPausedApply},
		{"consumer/leases_unsubscribe_deletes_rows", testConsumerLeasesUnsubscribe},
		{"consumer/leases_non_transactional_generation", testConsumerLeasesNonTransactional},
		{"consumer/rebuild_fences_straddling_poll_transactional", testConsumerRebuildFencesPollTx},
		{"consumer/rebuild_fences_straddling_poll_non_transactional", testConsumerRebuildFencesPollNonTx},
		{"consumer/rebuild_deletes_undelivered_and_skips", testConsumerRebuildDeletesDelivery},
		{"consumer/rebalance_joins_no_duplicates_three_processes", testConsumerRebalanceJoinsNoDuplicates},
		{"consumer/idle_caught_up_lag_zero_after_stop", testConsumerIdleLagZero},
		{"consumer/stop_during_read_saves_read_partitions", testConsumerStopDuringReadSaves},
	}
}

// fakeClock is the application clock tests move by hand (no timed
// assertions): whole seconds, so every engine's TIMESTAMP keeps it exactly.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *fakeClock) Add(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	return c.now
}

func mustConsumer(t T, reg *consumer.Registry, id string) consumer.Consumer {
	t.Helper()
	c, err := reg.Get(context.Background(), id)
	if err != nil {
		t.Fatalf("reading consumer %s: %v", id, err)
	}
	return c
}

func checkState(t T, c consumer.Consumer, state consumer.State, reason consumer.HaltReason, epoch int64, since time.Time) {
	t.Helper()
	if c.State != state || c.HaltReason != reason || c.Epoch != epoch || !c.StateSince.Equal(since) {
		t.Errorf("consumer is (%s, %q, epoch %d, since %s), want (%s, %q, epoch %d, since %s)",
			c.State, c.HaltReason, c.Epoch, c.StateSince, state, reason, epoch, since)
	}
}

func testConsumerStates(t T, env *Env) {
	_, e := openStore(t, env)
	ctx := context.Background()
	clock := newFakeClock()
	reg := consumer.NewRegistry(e, clock.Now)
	t0 := clock.Now()
	c, err := reg.Subscribe(ctx, "projection", "account-summary", consumer.SourceRef{Name: engine.EventStoreTopic, Partitions: e.Partitions})
	if err != nil {
		t.Fatalf("subscribe: %v", err)
	}
	checkState(t, mustConsumer(t, reg, c.ID), consumer.Running, "", 0, t0)
	again, err := reg.Subscribe(ctx, "projection", "account-summary", consumer.SourceRef{Name: engine.EventStoreTopic, Partitions: e.Partitions})
	if err != nil || again.ID != c.ID {
		t.Fatalf("second subscribe: %v, id %s want %s", err, again.ID, c.ID)
	}
	steps := []struct {
		do     func() error
		state  consumer.State
		reason consumer.HaltReason
		epoch  int64
	}{
		{func() error { return reg.Pause(ctx, c.ID) }, consumer.Paused, "", 0},
		{func() error { return reg.Resume(ctx, c.ID) }, consumer.Running, "", 0},
		{func() error { return reg.Halt(ctx, c.ID, consumer.ApplyError) }, consumer.Halted, consumer.ApplyError, 0},
		{func() error { return reg.Resume(ctx, c.ID) }, consumer.Running, "", 0},
		{func() error { _, err := reg.BeginRebuild(ctx, c.ID); return err }, consumer.Rebuilding, "", 1},
		{func() error { return reg.CompleteRebuild(ctx, c.ID, 1) }, consumer.Running, "", 1},
		{func() error { _, err := reg.Rebuild(ctx, c.ID); return err }, consumer.Running, "", 2},
	}
	for i, s := range steps {
		since := clock.Add(time.Duration(i+1) * time.Minute)
		if err := s.do(); err != nil {
			t.Fatalf("step %d (to %s): %v", i, s.state, err)
		}
		checkState(t, mustConsumer(t, reg, c.ID), s.state, s.reason, s.epoch, since)
	}
	// Refused transitions change nothing, state_since included.
	last := clock.Now()
	clock.Add(time.Hour)
	expectErr[*consumer.TransitionError](t, reg.Resume(ctx, c.ID), "resuming a running consumer")
	if err := reg.Pause(ctx, c.ID); err != nil {
		t.Fatal(err)
	}
	paused := clock.Now()
	expectErr[*consumer.TransitionError](t, reg.Pause(ctx, c.ID), "pausing a paused consumer")
	expectErr[*consumer.TransitionError](t, reg.Halt(ctx, c.ID, consumer.ApplyError), "halting a paused consumer")
	checkState(t, mustConsumer(t, reg, c.ID), consumer.Paused, "", 2, paused)
	_ = last
	cps, err := reg.Checkpoints(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(cps) != e.Partitions {
		t.Fatalf("%d checkpoints, want one per partition (%d)", len(cps), e.Partitions)
	}
	for _, cp := range cps {
		if cp.Recorded || cp.Epoch != 2 {
			t.Errorf("checkpoint %s/%d after a rebuild: recorded %v epoch %d, want no position under epoch 2", cp.Source, cp.Partition, cp.Recorded, cp.Epoch)
		}
	}
	if _, err := reg.Get(ctx, "00000000-0000-0000-0000-000000000000"); !errors.Is(err, consumer.ErrNotFound) {
		t.Errorf("unknown consumer: %v, want ErrNotFound", err)
	}
}

func countConsumers(t T, env *Env) int {
	t.Helper()
	var n int
	if err := env.DB.QueryRow(`SELECT COUNT(*) FROM CONSUMERS`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func testConsumerNames(t T, env *Env) {
	_, e := openStore(t, env)
	ctx := context.Background()
	reg := consumer.NewRegistry(e, nil)
	src := consumer.SourceRef{Name: engine.EventStoreTopic, Partitions: e.Partitions}
	base, err := reg.Subscribe(ctx, "projection", "account-summary", src)
	if err != nil {
		t.Fatal(err)
	}
	// Refused before any SQL: nothing created.
	before := countConsumers(t, env)
	for _, bad := range []struct{ typ, name string }{
		{"", "x"}, {"projection", ""}, {strings.Repeat("t", 33), "x"}, {"projection", strings.Repeat("n", 256)},
		{"projection", "a\x00b"}, {"projection", "\xff"},
	} {
		_, err := reg.Subscribe(ctx, bad.typ, bad.name, src)
		if !errors.Is(err, consumer.ErrInvalidName) {
			t.Errorf("subscribe %q/%q: %v, want ErrInvalidName", bad.typ, bad.name, err)
		}
	}
	for _, name := range []string{"Account-Summary", "account-summary "} {
		c, err := reg.Subscribe(ctx, "projection", name, src)
		switch {
		case strings.HasSuffix(name, " ") && env.Catalogue.KeysIgnoreTrailingSpaces:
			expectErr[*consumer.InvalidNameError](t, err, "a trailing space where the engine ignores it")
		case err == nil:
			// The collation tells them apart: a consumer of its own.
			if c.ID == base.ID || c.Name != name {
				t.Errorf("subscribe %q returned %q (id %s), the base is id %s", name, c.Name, c.ID, base.ID)
			}
			before++
		default:
			col := expectErr[*consumer.NameCollisionError](t, err, "subscribe "+name)
			if col.ExistingName != "account-summary" {
				t.Errorf("collision names %q, want account-summary", col.ExistingName)
			}
			t.Logf("%q: refused, the collation merges it with account-summary", name)
		}
	}
	if n := countConsumers(t, env); n != before {
		t.Errorf("%d consumer rows, want %d", n, before)
	}
}

func testCheckpointConcurrent(t T, env *Env) {
	_, e := openStore(t, env)
	ctx := context.Background()
	reg := consumer.NewRegistry(e, nil)
	c, err := reg.Subscribe(ctx, "projection", "concurrent", consumer.SourceRef{Name: "topic", Partitions: 1})
	if err != nil {
		t.Fatal(err)
	}
	const writers, each = 6, 15
	run := func(epoch int64, base int64) error {
		var wg sync.WaitGroup
		errs := make(chan error, writers)
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range each {
					// Interleaved, partly descending positions: later
					// writes often try to move the checkpoint back.
					pos := base + int64((i*writers+w*7)%(writers*each)) + 1
					if _, err := reg.Advance(ctx, nil, c.ID, "topic", 0, pos, epoch); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		return <-errs
	}
	// A reader sees the checkpoint only ever move forward.
	stop := make(chan struct{})
	var seen []int64
	var readerErr error
	var rwg sync.WaitGroup
	rwg.Add(1)
	go func() {
		defer rwg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			cps, err := reg.Checkpoints(ctx, c.ID)
			if err != nil {
				readerErr = err
				return
			}
			seen = append(seen, cps[0].Position)
		}
	}()
	if err := run(0, 0); err != nil {
		t.Fatalf("advancing: %v", err)
	}
	close(stop)
	rwg.Wait()
	if readerErr != nil {
		t.Fatal(readerErr)
	}
	for i := 1; i < len(seen); i++ {
		if seen[i] < seen[i-1] {
			t.Fatalf("checkpoint moved back from %d to %d", seen[i-1], seen[i])
		}
	}
	checkpointIs(t, reg, c.ID, writers*each, 0)
	epoch, err := reg.Rebuild(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	// Polls begun before the rebuild (epoch 0) race ones after it: only the
	// new epoch's writes land.
	var wg sync.WaitGroup
	var staleErr, freshErr error
	wg.Add(2)
	go func() { defer wg.Done(); staleErr = run(0, 1000) }()
	go func() { defer wg.Done(); freshErr = run(epoch, 0) }()
	wg.Wait()
	if staleErr != nil || freshErr != nil {
		t.Fatalf("advancing: %v / %v", staleErr, freshErr)
	}
	checkpointIs(t, reg, c.ID, writers*each, epoch)
}

func checkpointIs(t T, reg *consumer.Registry, id string, pos, epoch int64) {
	t.Helper()
	cps, err := reg.Checkpoints(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	for _, cp := range cps {
		if cp.Position != pos || cp.Epoch != epoch {
			t.Errorf("checkpoint %s/%d at %d (epoch %d), want %d (epoch %d)", cp.Source, cp.Partition, cp.Position, cp.Epoch, pos, epoch)
		}
	}
}

// caseInsensitiveNames are the statements that give CONSUMERS.consumer_name
// a collation ignoring case, as a database created with the engine's
// default collation has it (MySQL/MariaDB's utf8mb4_general_ci, an ICU
// level-2 collation on PostgreSQL, VARCHAR_IGNORECASE on H2 and
// HSQLDB).
var caseInsensitiveNames = map[string][]string{
	"mysql":   {`ALTER TABLE CONSUMERS MODIFY consumer_name VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci NOT NULL`},
	"mariadb": {`ALTER TABLE CONSUMERS MODIFY consumer_name VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci NOT NULL`},
	"postgres": {`CREATE COLLATION tm_ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false)`,
		`ALTER TABLE CONSUMERS ALTER COLUMN consumer_name TYPE VARCHAR(255) COLLATE tm_ci`},
	"h2": {`ALTER TABLE CONSUMERS ALTER COLUMN consumer_name VARCHAR_IGNORECASE(255) NOT NULL`},
	// HSQLDB keeps an index's comparison from its creation: the unique
	// constraint is made again over the new type.
	"hsqldb": {`ALTER TABLE CONSUMERS DROP CONSTRAINT uq_CONSUMERS`,
		`ALTER TABLE CONSUMERS ALTER COLUMN consumer_name SET DATA TYPE VARCHAR_IGNORECASE(255)`,
		`ALTER TABLE CONSUMERS ADD CONSTRAINT uq_CONSUMERS UNIQUE (consumer_type, consumer_name)`},
}

// testConsumerNamesCaseInsensitive: where the collation merges names that
// differ in case, a subscribe under the other spelling is refused (typed)
// and never handed the existing consumer; nothing is created.
func testConsumerNamesCaseInsensitive(t T, env *Env) {
	_, e := openStore(t, env)
	ctx := context.Background()
	ddl, ok := caseInsensitiveNames[env.Catalogue.Identity.Name]
	if !ok {
		skipf(t, "no case-insensitive collation statement for %s here (SQLite cannot change a column's collation; other engines are not listed)", env.Catalogue.Identity.Name)
	}
	for _, q := range ddl {
		if _, err := env.DB.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	reg := consumer.NewRegistry(e, nil)
	src := consumer.SourceRef{Name: engine.EventStoreTopic, Partitions: e.Partitions}
	if _, err := reg.Subscribe(ctx, "projection", "account-summary", src); err != nil {
		t.Fatal(err)
	}
	before := countConsumers(t, env)
	_, err := reg.Subscribe(ctx, "projection", "Account-Summary", src)
	col := expectErr[*consumer.NameCollisionError](t, err, "subscribing Account-Summary beside account-summary")
	if col.ExistingName != "account-summary" || !errors.Is(err, consumer.ErrNameCollision) {
		t.Errorf("collision: %v", err)
	}
	_, err = reg.Lookup(ctx, "projection", "Account-Summary")
	expectErr[*consumer.NameCollisionError](t, err, "looking up Account-Summary")
	if n := countConsumers(t, env); n != before {
		t.Errorf("%d consumer rows, want %d", n, before)
	}
}
