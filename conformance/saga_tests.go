package conformance

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/tidemarkdb/tidemark/core/consumer"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/eventstore"
	"github.com/tidemarkdb/tidemark/core/hwm"
	"github.com/tidemarkdb/tidemark/core/saga"
)

func sagaTests() []Test {
	return []Test{
		{"saga/start_correlate_complete_through_consumer", testSagaLifecycle},
		{"saga/concurrent_updates_lose_nothing", testSagaConcurrent},
		{"saga/starts_with_deadlines_do_not_lock_each_other", testSagaStartsDoNotLockEachOther},
		{"saga/reads_during_concurrent_updates", testSagaReadsDuringUpdates},
		{"saga/conflict_and_concurrent_start_retried", testSagaConflictRetried},
		{"saga/codec_init_cancel_all", testSagaCodecInitCancelAll},
		{"saga/random_initial_version_never_repeats", testSagaRandomVersion},
		{"saga/declarations_refused_before_any_sql", testSagaRefused},
		{"saga/purge_keeps_pending_deadline_removes_old_completed", testSagaPurge},
		{"saga/deadline_due_by_database_clock", testSagaDueByDatabaseClock},
		{"saga/deadline_reschedule_replaces_complete_cancels", testSagaReschedule},
		{"saga/cancel_races_due_deadline_one_wins", testSagaCancelRace},
		{"saga/deadline_fires_once_three_processes", testSagaDeadlineThreeProcesses},
		{"saga/deadline_holder_killed_mid_delivery_another_delivers", testSagaDeadlineHolderKilled},
		{"saga/deadline_once_without_lease_three_processes", testSagaDeadlineOnceWithoutLease},
		{"saga/publication_metadata_round_trip_and_purge", testPublicationMetadata},
		{"saga/publication_concurrent_put_and_delete", testPublicationConcurrentPutAndDelete},
		{"saga/operator_status_list_without_declaration", testSagaOperatorStatus},
		{"saga/deadline_lock_one_holder_takeover_own_lease", testSagaDeadlineLock},
		{"saga/scheduled_purge_by_lease_holder", testSagaScheduledPurge},
		{"saga/deadline_due_across_session_time_zones", testSagaSessionZone},
		{"saga/failing_deadline_does_not_starve_others", testSagaFailingDeadlineNoStarve},
		{"saga/due_read_bounded_by_batch", testSagaDueReadBounded},
		{"saga/deadline_metadata_restored", testSagaDeadlineMetadata},
		{"saga/due_read_merges_saga_types_in_due_order", testSagaDueAcrossSagaTypes},
		{"saga/foreign_overdue_deadlines_reported_kept", testSagaForeignOverdueReported},
		{"schema/saga_own_table_prefixed", testSagaOwnTablePrefixed},
	}
}

// The suite's saga: a transfer opened by sagaOpened (optionally arming
// its "timeout" deadline), counting sagaStep events, disarmed by
// sagaDisarm, completed by sagaDone.
type sagaState struct {
	Opened    int `json:"opened"`
	Steps     int `json:"steps"`
	Fired     int `json:"fired"`
	CancelWon int `json:"cancel_won"`
	Disarms   int `json:"disarms"`
}

type sagaOpened struct {
	ID      string `json:"id"`
	ArmMs   int64  `json:"arm_ms,omitempty"`
	Payload string `json:"payload,omitempty"`
}
type sagaStep struct {
	ID string `json:"id"`
}
type sagaDone struct {
	ID string `json:"id"`
}
type sagaDisarm struct {
	ID string `json:"id"`
}
type sagaRearm struct {
	ID    string `json:"id"`
	ArmMs int64  `json:"arm_ms"`
}

const sagaTimeout = "timeout"

// testSaga declares the suite's saga; onFire, when set, runs inside the
// deadline handler (before the state changes).
func testSaga(sagaType string, onFire func(sagaID string), opts ...saga.Option) *saga.Saga[sagaState] {
	return testSagaCtx(sagaType, func(ctx saga.Context) error {
		if onFire != nil {
			onFire(ctx.SagaID())
		}
		return nil
	}, opts...)
}

// testSagaCtx is testSaga whose deadline hook sees the handler's context
// (its transaction) and can fail the delivery.
func testSagaCtx(sagaType string, onFire func(ctx saga.Context) error, opts ...saga.Option) *saga.Saga[sagaState] {
	s := saga.New[sagaState](sagaType, opts...)
	saga.StartOn(s, func(e sagaOpened) string { return e.ID }, func(ctx saga.Context, e sagaOpened, st *sagaState) error {
		st.Opened++
		if e.ArmMs != 0 {
			return saga.Schedule(ctx, sagaTimeout, saga.In(time.Duration(e.ArmMs)*time.Millisecond), e.Payload)
		}
		return nil
	})
	saga.On(s, func(e sagaStep) string { return e.ID }, func(_ saga.Context, _ sagaStep, st *sagaState) error {
		st.Steps++
		return nil
	})
	saga.On(s, func(e sagaDone) string { return e.ID }, func(saga.Context, sagaDone, *sagaState) error { return saga.Complete })
	saga.On(s, func(e sagaDisarm) string { return e.ID }, func(ctx saga.Context, _ sagaDisarm, st *sagaState) error {
		st.Disarms++
		won, err := saga.Cancel(ctx, sagaTimeout)
		if won {
			st.CancelWon++
		}
		return err
	})
	saga.On(s, func(e sagaRearm) string { return e.ID }, func(ctx saga.Context, e sagaRearm, _ *sagaState) error {
		return saga.Schedule(ctx, sagaTimeout, saga.In(time.Duration(e.ArmMs)*time.Millisecond), nil)
	})
	saga.On(s, func(e sagaRearmAt) string { return e.ID }, func(ctx saga.Context, e sagaRearmAt, _ *sagaState) error {
		return saga.Schedule(ctx, sagaTimeout, saga.At(e.At), nil)
	})
	saga.OnDeadline(s, sagaTimeout, func(ctx saga.Context, _ string, st *sagaState) error {
		if err := onFire(ctx); err != nil {
			return err
		}
		st.Fired++
		return nil
	})
	return s
}

type sagaRig struct {
	e  *engine.Engine
	st *saga.Store[sagaState]
}

func newSagaRig(t T, env *Env) *sagaRig {
	e := openEngine(t, env, defaultConfig(env))
	st, err := saga.Open(e, testSaga("conformance.Transfer", nil))
	if err != nil {
		t.Fatalf("saga.Open: %v", err)
	}
	return &sagaRig{e: e, st: st}
}

// sagaRecord is ev as a stored event of its Go type's name.
func sagaRecord(t T, ev any) eventstore.Recorded {
	b, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	return eventstore.Recorded{ID: fmt.Sprintf("%T", ev), Type: fmt.Sprintf("%T", ev)[len("conformance."):], Payload: b}
}

// apply applies ev in a transaction of its own, run again on a conflict.
func (r *sagaRig) apply(t T, ev any) {
	t.Helper()
	if err := r.tryApply(ev); err != nil {
		t.Fatalf("apply %T: %v", ev, err)
	}
}

func (r *sagaRig) tryApply(ev any) error {
	b, _ := json.Marshal(ev)
	rec := eventstore.Recorded{ID: fmt.Sprintf("%T", ev), Type: fmt.Sprintf("%T", ev)[len("conformance."):], Payload: b}
	return r.e.InTx(context.Background(), engine.OpWrite, engine.TransientRetry{Unbounded: true}, func(tx *sql.Tx) error {
		return r.st.Apply(context.Background(), tx, rec)
	})
}

func (r *sagaRig) get(t T, id string) (saga.Instance[sagaState], bool) {
	t.Helper()
	in, ok, err := r.st.Get(context.Background(), id)
	if err != nil {
		t.Fatalf("Get(%s): %v", id, err)
	}
	return in, ok
}

// testSagaLifecycle: through the durable consumer, a start event creates
// the instance, later events correlate to it, an event of no instance
// that does not start one is passed over, Complete sets completed_at, and
// a completed saga receives nothing more.
func testSagaLifecycle(t T, env *Env) {
	r := newSagaRig(t, env)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	adv := hwm.New(r.e, hwm.Options{PollInterval: 10 * time.Millisecond})
	go func() { _ = adv.Run(ctx) }()
	store := eventstore.New(r.e, adv)
	appendEv := func(aggID string, evs ...any) {
		t.Helper()
		var list []eventstore.Event
		for _, ev := range evs {
			rec := sagaRecord(t, ev)
			list = append(list, eventstore.Event{Type: rec.Type, Payload: rec.Payload})
		}
		if _, err := store.Append(ctx, eventstore.Stream{AggregateType: "conformance.Transfer", AggregateID: aggID, Events: list}); err != nil {
			t.Fatalf("append: %v", err)
		}
	}
	appendEv("orphan", sagaStep{ID: "t-none"}) // correlates to nothing, starts nothing
	appendEv("t-1", sagaOpened{ID: "t-1"}, sagaStep{ID: "t-1"}, sagaStep{ID: "t-1"})
	opts := r.st.Options(consumer.EventStore(store, adv))
	opts.PollInterval = 20 * time.Millisecond
	run, err := consumer.NewRunner(ctx, consumer.NewRegistry(r.e, nil), opts)
	if err != nil {
		t.Fatalf("consumer.NewRunner: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- run.Run(ctx) }()
	defer func() { stop(); <-done }()
	var last saga.Instance[sagaState]
	waitForOr(t, "t-1 with 2 steps", func() bool {
		select {
		case err := <-done: // the runner gave up: say why, not only that nothing came
			done <- err
			t.Fatalf("the saga's runner stopped: %v", err)
		default:
		}
		in, _ := r.get(t, "t-1")
		last = in
		return in.State.Steps >= 2
	}, func() string { return fmt.Sprintf("%+v", last) })
	if _, ok := r.get(t, "t-none"); ok {
		t.Errorf("an event correlating to no instance started one")
	}
	// One stream, applied in order: once t-2 exists, the step after t-1's
	// completion has been handled (and must have been passed over).
	appendEv("t-1", sagaDone{ID: "t-1"}, sagaStep{ID: "t-1"}, sagaOpened{ID: "t-2"})
	waitFor(t, "t-2 started", func() bool { _, ok := r.get(t, "t-2"); return ok })
	in, _ := r.get(t, "t-1")
	if in.State.Opened != 1 || in.State.Steps != 2 || !in.Completed {
		t.Errorf("t-1 = %+v, want opened once, 2 steps (the step after completion not applied), completed", in)
	}
}

// testSagaConcurrent: applies of one instance from several goroutines,
// each in its own transaction, conflict on the version and are re-applied:
// the final state counts every event. Whether a conflict happens here
// depends on scheduling; saga/conflict_and_concurrent_start_retried forces
// one of an update and one of two starts, and counts them.
func testSagaConcurrent(t T, env *Env) {
	r := newSagaRig(t, env)
	r.apply(t, sagaOpened{ID: "c-1"})
	const workers, each = 4, 10
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				if err := r.tryApply(sagaStep{ID: "c-1"}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("apply: %v", err)
	}
	in, _ := r.get(t, "c-1")
	if in.State.Steps != workers*each {
		t.Errorf("steps = %d, want %d: an update was lost", in.State.Steps, workers*each)
	}
}

// testSagaReadsDuringUpdates: Get of an instance that other transactions
// update and commit meanwhile returns a state, never an error, and each
// reader sees the steps never go back. A read the database undoes as
// transient (Firebird's "BLOB not found", a record version collected
// before its BLOB was fetched) is read again, not returned.
func testSagaReadsDuringUpdates(t T, env *Env) {
	r := newSagaRig(t, env)
	r.apply(t, sagaOpened{ID: "r-1"})
	const writers, each, readers = 2, 40, 3
	var writing, reading sync.WaitGroup
	done := make(chan struct{})
	errs := make(chan error, writers+readers)
	for range writers {
		writing.Add(1)
		go func() {
			defer writing.Done()
			for range each {
				if err := r.tryApply(sagaStep{ID: "r-1"}); err != nil {
					errs <- fmt.Errorf("apply: %w", err)
					return
				}
			}
		}()
	}
	reads := make([]int, readers)
	for i := range readers {
		reading.Add(1)
		go func() {
			defer reading.Done()
			last := 0
			for {
				select {
				case <-done:
					return
				default:
				}
				in, ok, err := r.st.Get(context.Background(), "r-1")
				if err != nil || !ok {
					errs <- fmt.Errorf("reader %d after %d reads: Get = %v, %v", i, reads[i], ok, err)
					return
				}
				if in.State.Steps < last {
					errs <- fmt.Errorf("reader %d: steps went from %d back to %d: %w", i, last, in.State.Steps, errWentBack)
					return
				}
				last = in.State.Steps
				reads[i]++
			}
		}()
	}
	writing.Wait()
	close(done)
	reading.Wait()
	close(errs)
	var back []error
	for err := range errs {
		if errors.Is(err, errWentBack) && env.Catalogue.Identity.Name == "h2" {
			back = append(back, err)
			continue
		}
		t.Errorf("%v", err)
	}
	if in, _ := r.get(t, "r-1"); in.State.Steps != writers*each {
		t.Errorf("steps = %d, want %d", in.State.Steps, writers*each)
	}
	t.Logf("reads per reader during %d updates: %v", writers*each, reads)
	if len(back) > 0 && !t.Failed() {
		// Seen in about 1 run in 5 on a busy machine.
		skipf(t, "H2's MVStore makes a commit visible to concurrent readers one at a time (h2database/h2database#1137: a reader can see a committing transaction's data before another reader that starts later): %v", back)
	}
}

// errWentBack marks a reader seeing an older state than it saw before.
var errWentBack = errors.New("state went back")

// testSagaRandomVersion: a new instance starts at a random positive
// version; each update adds one; an instance started again under the id of
// a deleted one starts at another version.
func testSagaRandomVersion(t T, env *Env) {
	r := newSagaRig(t, env)
	r.apply(t, sagaOpened{ID: "v-1"})
	first, _ := r.get(t, "v-1")
	r.apply(t, sagaStep{ID: "v-1"})
	second, _ := r.get(t, "v-1")
	if first.Version <= 0 || second.Version != first.Version+1 {
		t.Errorf("versions %d then %d; want a positive start and +1 per update", first.Version, second.Version)
	}
	r.apply(t, sagaOpened{ID: "v-2"})
	other, _ := r.get(t, "v-2")
	if other.Version == first.Version {
		t.Errorf("two new instances both started at version %d", other.Version)
	}
	if _, err := r.e.ExecText(context.Background(), r.e.DB, `DELETE FROM ${saga_instances_table} WHERE saga_id = #{id}`, nil, map[string]any{"id": "v-1"}); err != nil {
		t.Fatalf("delete v-1: %v", err)
	}
	r.apply(t, sagaOpened{ID: "v-1"})
	again, _ := r.get(t, "v-1")
	if again.Version == first.Version || again.Version == second.Version || again.ID == first.ID {
		t.Errorf("restarted v-1: id %s version %d; the deleted one had id %s, versions %d and %d", again.ID, again.Version, first.ID, first.Version, second.Version)
	}
}

// testSagaRefused: declarations and arguments refused before any SQL runs.
func testSagaRefused(t T, env *Env) {
	e := openEngine(t, env, defaultConfig(env))
	if _, err := saga.Open(e, testSaga("x", nil, saga.WithTable("NOT_A_SAGA_TABLE"))); !errors.Is(err, saga.ErrInvalidDeclaration) {
		t.Errorf("a table not among the engine's saga tables: %v, want ErrInvalidDeclaration", err)
	}
	if _, err := saga.Open(e, saga.New[sagaState]("no-start")); !errors.Is(err, saga.ErrInvalidDeclaration) {
		t.Errorf("a saga without a start handler: %v, want ErrInvalidDeclaration", err)
	}
	if _, err := saga.Open(e, testSaga("", nil)); !errors.Is(err, saga.ErrInvalidDeclaration) {
		t.Errorf("an empty saga type: %v, want ErrInvalidDeclaration", err)
	}
	s := testSaga("conformance.Refusals", nil)
	saga.On(s, func(e sagaStep) string { return e.ID }, func(saga.Context, sagaStep, *sagaState) error { return nil })
	if err := s.Check(); !errors.Is(err, saga.ErrInvalidDeclaration) {
		t.Errorf("two handlers of one event type: %v, want ErrInvalidDeclaration", err)
	}
	bad := saga.New[sagaState]("conformance.BadDeadline")
	var got error
	saga.StartOn(bad, func(e sagaOpened) string { return e.ID }, func(ctx saga.Context, _ sagaOpened, _ *sagaState) error {
		got = saga.Schedule(ctx, "undeclared", saga.In(time.Second), nil)
		return got
	})
	st, err := saga.Open(e, bad)
	if err != nil {
		t.Fatalf("saga.Open: %v", err)
	}
	err = e.InTx(context.Background(), engine.OpWrite, engine.TransientRetry{}, func(tx *sql.Tx) error {
		return st.Apply(context.Background(), tx, sagaRecord(t, sagaOpened{ID: "b-1"}))
	})
	var inv *saga.InvalidDeadlineError
	if !errors.As(got, &inv) || !errors.As(err, &inv) {
		t.Errorf("scheduling a deadline with no handler: %v (apply: %v), want *InvalidDeadlineError", got, err)
	}
	err = e.InTx(context.Background(), engine.OpWrite, engine.TransientRetry{}, func(tx *sql.Tx) error {
		return st.Apply(context.Background(), tx, sagaRecord(t, sagaOpened{ID: ""}))
	})
	var badID *saga.SagaIDError
	if !errors.As(err, &badID) {
		t.Errorf("an event giving an empty saga id: %v, want *SagaIDError", err)
	}
	if _, err := saga.Cancel(saga.Context{Context: context.Background()}, "x"); !errors.Is(err, saga.ErrNoScope) {
		t.Errorf("Cancel outside a handler: %v, want ErrNoScope", err)
	}
	if _, err := saga.NewDeadlines(e, nil); err == nil {
		t.Errorf("NewDeadlines with no saga: no error")
	}
	// A store of another engine: its SQL would run in a transaction of
	// the deliverer's engine (another database, in general).
	other, err := saga.Open(openEngine(t, env, defaultConfig(env)), testSaga("conformance.OtherEngine", nil))
	if err != nil {
		t.Fatalf("saga.Open on a second engine: %v", err)
	}
	var opt *saga.InvalidOptionError
	if _, err := saga.NewDeadlines(e, []saga.Target{other}); !errors.As(err, &opt) {
		t.Errorf("NewDeadlines with a store of another engine: %v, want *InvalidOptionError", err)
	}
}
