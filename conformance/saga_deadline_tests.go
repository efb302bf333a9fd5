package conformance

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/saga"
	"github.com/tidemarkdb/tidemark/core/stmt"
	"github.com/tidemarkdb/tidemark/internal/testtime"
)

// deliverer is a deadline deliverer of the rig's saga, polled by hand.
func (r *sagaRig) deliverer(t T) *saga.Deadlines {
	t.Helper()
	d, err := saga.NewDeadlines(r.e, []saga.Target{r.st}, saga.WithPollInterval(20*time.Millisecond),
		saga.WithLeaseDuration(testtime.D(5*time.Second)))
	if err != nil {
		t.Fatalf("NewDeadlines: %v", err)
	}
	return d
}

func (r *sagaRig) poll(t T, d *saga.Deadlines) int {
	t.Helper()
	n, err := d.Poll(context.Background())
	if err != nil {
		t.Fatalf("Poll: %v", err)
	}
	return n
}

func (r *sagaRig) pending(t T, id string) int64 {
	t.Helper()
	n, err := r.st.PendingDeadlines(context.Background(), id)
	if err != nil {
		t.Fatalf("PendingDeadlines(%s): %v", id, err)
	}
	return n
}

func (r *sagaRig) dbNow(t T) time.Time {
	t.Helper()
	now, err := stmt.QueryRowDatabaseNow(context.Background(), r.e, r.e.DB)
	if err != nil {
		t.Fatalf("database clock: %v", err)
	}
	return time.Time(now.Now)
}

// testSagaPurge: a purge removes completed sagas past the age (by the
// database clock) and never an active saga or one with a pending deadline.
func testSagaPurge(t T, env *Env) {
	r := newSagaRig(t, env)
	ctx := context.Background()
	for _, id := range []string{"p-active", "p-done", "p-held"} {
		r.apply(t, sagaOpened{ID: id})
	}
	r.apply(t, sagaDone{ID: "p-done"})
	r.apply(t, sagaDone{ID: "p-held"})
	// A deadline left for a completed saga (completion cancels its own;
	// this one came another way).
	if _, err := stmt.ExecSagaDeadlineSchedule(ctx, r.e, r.e.DB, stmt.SagaDeadlineScheduleParams{ID: "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b",
		SagaType: r.st.SagaType(), SagaID: "p-held", Name: sagaTimeout, DueMillis: 3600_000}); err != nil {
		t.Fatalf("schedule a deadline for p-held: %v", err)
	}
	if n, err := r.st.Purge(ctx, time.Hour); err != nil || n != 0 {
		t.Errorf("Purge(1h) right after completion = %d, %v; want nothing purged", n, err)
	}
	purged := int64(0)
	waitFor(t, "p-done purged once the database clock passed its completion", func() bool {
		n, err := r.st.Purge(ctx, 0)
		if err != nil {
			t.Fatalf("Purge(0): %v", err)
		}
		purged += n
		_, ok := r.get(t, "p-done")
		return !ok
	})
	if _, ok := r.get(t, "p-held"); !ok {
		t.Errorf("a completed saga with a pending deadline was purged")
	}
	if _, ok := r.get(t, "p-active"); !ok {
		t.Errorf("an active saga was purged")
	}
	if purged != 1 {
		t.Errorf("purged %d sagas, want 1", purged)
	}
}

// testSagaDueByDatabaseClock: a deadline scheduled At a time read off the
// database clock is not delivered before the database clock reaches it and
// is delivered once it has; no process clock decides.
func testSagaDueByDatabaseClock(t T, env *Env) {
	r := newSagaRig(t, env)
	d := r.deliverer(t)
	r.apply(t, sagaOpened{ID: "k-1"})
	due := r.dbNow(t).Add(testtime.D(700 * time.Millisecond))
	r.apply(t, sagaRearmAt{ID: "k-1", At: due})
	n := r.poll(t, d)
	if after := r.dbNow(t); after.Before(due) {
		if n != 0 {
			t.Errorf("delivered %d deadlines before the database clock reached the due time", n)
		}
	} else {
		t.Logf("the database clock passed the due time during the first poll (slow machine): the early check is moot")
	}
	delivered := n
	waitFor(t, "k-1's deadline delivered once due on the database clock", func() bool {
		delivered += r.poll(t, d)
		return delivered >= 1
	})
	if now := r.dbNow(t); now.Before(due) {
		t.Errorf("delivered at database time %v, before the due time %v", now, due)
	}
	if in, _ := r.get(t, "k-1"); in.State.Fired != 1 || delivered != 1 {
		t.Errorf("k-1 fired %d times (polls delivered %d); want once", in.State.Fired, delivered)
	}
}

// sagaRearmAt schedules the timeout At a time.
type sagaRearmAt struct {
	ID string    `json:"id"`
	At time.Time `json:"at"`
}

// testSagaReschedule: scheduling a name again replaces its deadline;
// completion cancels the saga's deadlines; a fired deadline is gone.
func testSagaReschedule(t T, env *Env) {
	r := newSagaRig(t, env)
	d := r.deliverer(t)
	r.apply(t, sagaOpened{ID: "r-1", ArmMs: 3600_000})
	r.apply(t, sagaRearm{ID: "r-1", ArmMs: -1000})
	if n := r.pending(t, "r-1"); n != 1 {
		t.Errorf("after rescheduling: %d deadlines pending, want 1 (replaced)", n)
	}
	r.apply(t, sagaOpened{ID: "r-2", ArmMs: -1000})
	r.apply(t, sagaDone{ID: "r-2"})
	if n := r.pending(t, "r-2"); n != 0 {
		t.Errorf("completed r-2 still has %d deadlines", n)
	}
	if n := r.poll(t, d); n != 1 {
		t.Errorf("poll delivered %d, want 1 (r-1's rescheduled deadline only)", n)
	}
	in1, _ := r.get(t, "r-1")
	in2, _ := r.get(t, "r-2")
	if in1.State.Fired != 1 || in2.State.Fired != 0 || r.pending(t, "r-1") != 0 {
		t.Errorf("r-1 fired %d (pending %d), r-2 fired %d; want 1, 0, 0", in1.State.Fired, r.pending(t, "r-1"), in2.State.Fired)
	}
	if n := r.poll(t, d); n != 0 {
		t.Errorf("a second poll delivered %d again", n)
	}
}

// testSagaCancelRace: a cancel and the delivery of a due deadline run at
// once, round after round: exactly one of them wins each time.
func testSagaCancelRace(t T, env *Env) {
	r := newSagaRig(t, env)
	d := r.deliverer(t)
	for i := range 8 {
		id := fmt.Sprintf("race-%d", i)
		r.apply(t, sagaOpened{ID: id, ArmMs: -1})
		var wg sync.WaitGroup
		var pollErr, cancelErr error
		wg.Add(2)
		go func() { defer wg.Done(); _, pollErr = d.Poll(context.Background()) }()
		go func() { defer wg.Done(); cancelErr = r.tryApply(sagaDisarm{ID: id}) }()
		wg.Wait()
		if pollErr != nil || cancelErr != nil {
			t.Fatalf("round %d: poll %v, cancel %v", i, pollErr, cancelErr)
		}
		// A poll that ran before the deadline was visible delivers it now
		// unless the cancel won.
		r.poll(t, d)
		in, _ := r.get(t, id)
		if in.State.Fired+in.State.CancelWon != 1 || in.State.Disarms != 1 || r.pending(t, id) != 0 {
			t.Errorf("round %d: fired %d, cancel won %d (disarms %d, pending %d); want exactly one winner",
				i, in.State.Fired, in.State.CancelWon, in.State.Disarms, r.pending(t, id))
		}
	}
}

// heldLease is an application's lease for saga.WithLease.
type heldLease struct{ held bool }

func (l *heldLease) Held(context.Context) (bool, error) { return l.held, nil }

// testSagaDeadlineLock: only the holder of the deadline lock polls;
// another process's deliverer takes it over once it expired on the
// database clock, and the old holder then polls no more; an application's
// own lease replaces the lock row.
func testSagaDeadlineLock(t T, env *Env) {
	r := newSagaRig(t, env)
	lease := testtime.D(time.Second)
	mk := func(opts ...saga.DeadlineOption) *saga.Deadlines {
		d, err := saga.NewDeadlines(r.e, []saga.Target{r.st}, append([]saga.DeadlineOption{saga.WithPollInterval(20 * time.Millisecond), saga.WithLeaseDuration(lease)}, opts...)...)
		if err != nil {
			t.Fatalf("NewDeadlines: %v", err)
		}
		return d
	}
	d1, d2 := mk(saga.WithOwner("first")), mk(saga.WithOwner("second"))
	r.poll(t, d1) // takes the lock
	r.apply(t, sagaOpened{ID: "l-1", ArmMs: -1})
	if n := r.poll(t, d2); n != 0 || r.pending(t, "l-1") != 1 {
		t.Fatalf("a process without the lock delivered %d", n)
	}
	delivered := 0
	waitFor(t, "the second deliverer takes the expired lock over and delivers", func() bool {
		delivered += r.poll(t, d2)
		return delivered == 1
	})
	r.apply(t, sagaOpened{ID: "l-2", ArmMs: -1})
	if n := r.poll(t, d1); n != 0 {
		t.Errorf("the old holder delivered %d after the takeover", n)
	}
	st, err := saga.ReadStatus(context.Background(), r.e)
	if err != nil || st.Lock == nil || st.Lock.Owner != "second" {
		t.Errorf("lock = %+v, %v; want held by second", st.Lock, err)
	}
	own := &heldLease{}
	d3 := mk(saga.WithLease(own), saga.WithOwner("third"))
	if n := r.poll(t, d3); n != 0 {
		t.Errorf("a deliverer whose own lease is not held delivered %d", n)
	}
	own.held = true
	if n := r.poll(t, d3); n != 1 {
		t.Errorf("a deliverer holding its own lease delivered %d, want 1 (l-2)", n)
	}
	if st, _ := saga.ReadStatus(context.Background(), r.e); st.Lock == nil || st.Lock.Owner != "second" {
		t.Errorf("the application's lease touched the lock row: %+v", st.Lock)
	}
}

// testSagaScheduledPurge: a deliverer run with WithPurge purges, while it
// holds the lease, completed sagas older than the age on the database
// clock, and keeps the active ones and those with a pending deadline.
func testSagaScheduledPurge(t T, env *Env) {
	r := newSagaRig(t, env)
	for _, id := range []string{"sp-active", "sp-done", "sp-held"} {
		r.apply(t, sagaOpened{ID: id})
	}
	r.apply(t, sagaDone{ID: "sp-done"})
	r.apply(t, sagaDone{ID: "sp-held"})
	if _, err := stmt.ExecSagaDeadlineSchedule(context.Background(), r.e, r.e.DB, stmt.SagaDeadlineScheduleParams{ID: "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5c",
		SagaType: r.st.SagaType(), SagaID: "sp-held", Name: sagaTimeout, DueMillis: 3600_000}); err != nil {
		t.Fatalf("schedule a deadline for sp-held: %v", err)
	}
	d, err := saga.NewDeadlines(r.e, []saga.Target{r.st}, saga.WithPollInterval(20*time.Millisecond),
		saga.WithLeaseDuration(testtime.D(5*time.Second)), saga.WithPurge(0, time.Millisecond))
	if err != nil {
		t.Fatalf("NewDeadlines: %v", err)
	}
	if _, err := saga.NewDeadlines(r.e, []saga.Target{r.st}, saga.WithPurge(-time.Hour, time.Hour)); err == nil {
		t.Errorf("a negative purge age was accepted")
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	waitFor(t, "the lease holder purges sp-done", func() bool { _, ok := r.get(t, "sp-done"); return !ok })
	stop()
	<-done
	for _, id := range []string{"sp-active", "sp-held"} {
		if _, ok := r.get(t, id); !ok {
			t.Errorf("the scheduled purge removed %s", id)
		}
	}
}

// errHandlerFails is the failure of failingSaga's deadline handler.
var errHandlerFails = errors.New("conformance: this deadline's handler always fails")

// failingSaga is the suite's saga whose "timeout" handler fails (not
// transiently) for every instance whose id starts with "bad-"; tries
// counts the handler's runs per instance.
func failingSaga(sagaType string, tries *sync.Map) *saga.Saga[sagaState] {
	s := saga.New[sagaState](sagaType)
	saga.StartOn(s, func(e sagaOpened) string { return e.ID }, func(ctx saga.Context, e sagaOpened, st *sagaState) error {
		st.Opened++
		return saga.Schedule(ctx, sagaTimeout, saga.In(time.Duration(e.ArmMs)*time.Millisecond), nil)
	})
	saga.OnDeadline(s, sagaTimeout, func(ctx saga.Context, _ string, st *sagaState) error {
		n, _ := tries.LoadOrStore(ctx.SagaID(), new(int))
		*n.(*int)++
		if strings.HasPrefix(ctx.SagaID(), "bad-") {
			return errHandlerFails
		}
		st.Fired++
		return nil
	})
	return s
}

// dueAt reads the due_at of the saga's deadline of instance sagaID.
func dueAt(t T, e *engine.Engine, sagaType, sagaID string) time.Time {
	t.Helper()
	c, err := e.CompileText(`SELECT due_at FROM ${saga_deadlines_table} WHERE saga_type = #{saga_type} AND saga_id = #{saga_id}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	args, err := c.Args(map[string]any{"saga_type": sagaType, "saga_id": sagaID})
	if err != nil {
		t.Fatal(err)
	}
	var at engine.UTCTime
	if err := e.DB.QueryRowContext(context.Background(), c.SQL, args...).Scan(&at); err != nil {
		t.Fatalf("due_at of %s: %v", sagaID, err)
	}
	return time.Time(at)
}

// testSagaFailingDeadlineNoStarve: three due deadlines whose handler
// always fails, due before a good one, with a batch of two: the good one is
// delivered within two polls (a failed delivery pushes its deadline's
// due_at past the database clock's now, so it sorts after every deadline
// already due); the failing ones stay pending, due later than before, and
// are tried again once the database clock reaches them.
func testSagaFailingDeadlineNoStarve(t T, env *Env) {
	e := openEngine(t, env, defaultConfig(env))
	var tries sync.Map
	const typ = "conformance.FailingDeadline"
	st, err := saga.Open(e, failingSaga(typ, &tries))
	if err != nil {
		t.Fatalf("saga.Open: %v", err)
	}
	r := &sagaRig{e: e, st: st}
	bad := []string{"bad-1", "bad-2", "bad-3"}
	for i, id := range bad {
		r.apply(t, sagaOpened{ID: id, ArmMs: int64(-4000 + 1000*i)})
	}
	r.apply(t, sagaOpened{ID: "good", ArmMs: -1})
	before := map[string]time.Time{}
	for _, id := range bad {
		before[id] = dueAt(t, e, typ, id)
	}
	d, err := saga.NewDeadlines(e, []saga.Target{st}, saga.WithBatch(2), saga.WithPollInterval(20*time.Millisecond),
		saga.WithLeaseDuration(testtime.D(5*time.Second)))
	if err != nil {
		t.Fatalf("NewDeadlines: %v", err)
	}
	for poll := 1; poll <= 3; poll++ {
		_, err := d.Poll(context.Background())
		if err != nil && !errors.Is(err, errHandlerFails) {
			t.Fatalf("poll %d: %v", poll, err)
		}
		if in, _ := r.get(t, "good"); in.State.Fired == 1 {
			break
		}
	}
	if in, _ := r.get(t, "good"); in.State.Fired != 1 {
		t.Fatalf("after 3 polls of a batch of 2, the good deadline fired %d times: the failing ones ahead of it starve it", in.State.Fired)
	}
	for _, id := range bad {
		if n := r.pending(t, id); n != 1 {
			t.Errorf("%s has %d deadlines pending after its handler failed; want 1 (never lost)", id, n)
		}
	}
	for _, id := range bad {
		if after := dueAt(t, e, typ, id); !after.After(before[id]) {
			t.Errorf("%s failed and is due at %v, as before (%v); want it pushed later", id, after, before[id])
		}
	}
	waitFor(t, "bad-1 tried again once the database clock reached its new due time", func() bool {
		if _, err := d.Poll(context.Background()); err != nil && !errors.Is(err, errHandlerFails) {
			t.Fatalf("poll: %v", err)
		}
		n, _ := tries.Load("bad-1")
		return *n.(*int) >= 2
	})
}
