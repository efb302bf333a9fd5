package conformance

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/saga"
	"github.com/tidemarkdb/tidemark/core/stmt"
	"github.com/tidemarkdb/tidemark/internal/sqlcount"
	"github.com/tidemarkdb/tidemark/internal/testtime"
)

// testSagaDueReadBounded: with a backlog of overdue deadlines (this saga's,
// and another saga type's due before them), one poll of a batch of five
// reads at most five rows of due deadlines, to the end of the result: the
// database limits the read and filters the saga type.
func testSagaDueReadBounded(t T, env *Env) {
	const batch = 5
	var mu sync.Mutex
	rows, ended := 0, 0
	isDue := func(q string) bool {
		return strings.Contains(q, "payload_json") && strings.Contains(q, "ORDER BY due_at")
	}
	counts := &sqlcount.Counts{
		Fault: func(_ context.Context, q string, row int) error {
			if isDue(q) {
				mu.Lock()
				rows = max(rows, row)
				mu.Unlock()
			}
			return nil
		},
		AtEnd: func(_ context.Context, q string) {
			if isDue(q) {
				mu.Lock()
				ended++
				mu.Unlock()
			}
		},
	}
	e := countedEngine(t, env, defaultConfig(env), counts)
	st, err := saga.Open(e, testSaga("conformance.Backlog", nil))
	if err != nil {
		t.Fatalf("saga.Open: %v", err)
	}
	ctx := context.Background()
	schedule := func(sagaType string, i int, dueMillis int64) {
		if _, err := stmt.ExecSagaDeadlineSchedule(ctx, e, e.DB, stmt.SagaDeadlineScheduleParams{ID: uuid.NewString(),
			SagaType: sagaType, SagaID: fmt.Sprintf("b-%d", i), Name: sagaTimeout, DueMillis: dueMillis}); err != nil {
			t.Fatalf("schedule: %v", err)
		}
	}
	for i := range batch {
		schedule("conformance.NotDeliveredHere", i, -120_000)
	}
	for i := range 4 * batch {
		schedule(st.SagaType(), i, -60_000)
	}
	d, err := saga.NewDeadlines(e, []saga.Target{st}, saga.WithBatch(batch), saga.WithPollInterval(20*time.Millisecond),
		saga.WithLeaseDuration(testtime.D(5*time.Second)))
	if err != nil {
		t.Fatalf("NewDeadlines: %v", err)
	}
	mu.Lock()
	rows, ended = 0, 0
	mu.Unlock()
	n, err := d.Poll(ctx)
	if err != nil || n != batch {
		t.Fatalf("poll delivered %d, %v; want %d", n, err, batch)
	}
	mu.Lock()
	defer mu.Unlock()
	if rows > batch || ended == 0 {
		t.Errorf("a poll of a batch of %d read %d rows of due deadlines (result read to its end: %v); want at most %d, the whole result",
			batch, rows, ended > 0, batch)
	}
}

// metadataSaga schedules "first" from its start handler; "first"'s handler
// schedules "second"; every handler records ctx.Metadata() by name.
func metadataSaga(seen *sync.Map) *saga.Saga[sagaState] {
	s := saga.New[sagaState]("conformance.Metadata")
	saga.StartOn(s, func(e sagaOpened) string { return e.ID }, func(ctx saga.Context, _ sagaOpened, _ *sagaState) error {
		seen.Store("event", string(ctx.Metadata()))
		return saga.Schedule(ctx, "first", saga.In(-time.Millisecond), nil)
	})
	saga.OnDeadline(s, "first", func(ctx saga.Context, _ struct{}, _ *sagaState) error {
		seen.Store("first", string(ctx.Metadata()))
		return saga.Schedule(ctx, "second", saga.In(-time.Millisecond), nil)
	})
	saga.OnDeadline(s, "second", func(ctx saga.Context, _ struct{}, st *sagaState) error {
		seen.Store("second", string(ctx.Metadata()))
		st.Fired++
		return nil
	})
	return s
}

// storedMetadata reads the metadata_json of the instance's deadline name
// ("" when NULL).
func storedMetadata(t T, e *engine.Engine, sagaID, name string) string {
	t.Helper()
	c, err := e.CompileText(`SELECT metadata_json FROM ${saga_deadlines_table} WHERE saga_type = #{saga_type} AND saga_id = #{saga_id} AND name = #{name}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	args, err := c.Args(map[string]any{"saga_type": "conformance.Metadata", "saga_id": sagaID, "name": name})
	if err != nil {
		t.Fatal(err)
	}
	var meta sql.NullString
	if err := e.DB.QueryRowContext(context.Background(), c.SQL, args...).Scan(&meta); err != nil {
		t.Fatalf("metadata_json of %s %s: %v", sagaID, name, err)
	}
	return meta.String
}

// testSagaDeadlineMetadata: the metadata of the event whose handler
// scheduled a deadline is stored with it, read back with it (the deadline
// handler's ctx.Metadata()) and stored again with a deadline that handler
// schedules.
func testSagaDeadlineMetadata(t T, env *Env) {
	e := openEngine(t, env, defaultConfig(env))
	var seen sync.Map
	st, err := saga.Open(e, metadataSaga(&seen))
	if err != nil {
		t.Fatalf("saga.Open: %v", err)
	}
	r := &sagaRig{e: e, st: st}
	const meta = `{"trace":"m-1","tenant":"acme"}`
	rec := sagaRecord(t, sagaOpened{ID: "m-1"})
	rec.Metadata = []byte(meta)
	if err := e.InTx(context.Background(), engine.OpWrite, engine.TransientRetry{}, func(tx *sql.Tx) error {
		return st.Apply(context.Background(), tx, rec)
	}); err != nil {
		t.Fatalf("apply: %v", err)
	}
	d, err := saga.NewDeadlines(e, []saga.Target{st}, saga.WithPollInterval(20*time.Millisecond), saga.WithLeaseDuration(testtime.D(5*time.Second)))
	if err != nil {
		t.Fatalf("NewDeadlines: %v", err)
	}
	if n := r.poll(t, d); n != 1 {
		t.Fatalf("the first poll delivered %d, want 1 (first)", n)
	}
	if got := storedMetadata(t, e, "m-1", "second"); got != meta {
		t.Errorf("a deadline scheduled by a deadline handler stores metadata_json %q, want %q (the first deadline's)", got, meta)
	}
	waitFor(t, "second delivered", func() bool { r.poll(t, d); in, _ := r.get(t, "m-1"); return in.State.Fired == 1 })
	for _, k := range []string{"event", "first", "second"} {
		if got, _ := seen.Load(k); got != meta {
			t.Errorf("the %s handler's ctx.Metadata() = %q, want %q", k, got, meta)
		}
	}
}

// testSagaDueAcrossSagaTypes: a deliverer of two saga types, each read on
// its own, delivers the earliest batch of them all, in due_at order.
func testSagaDueAcrossSagaTypes(t T, env *Env) {
	e := openEngine(t, env, defaultConfig(env))
	var mu sync.Mutex
	var order []string
	fired := func(id string) { mu.Lock(); order = append(order, id); mu.Unlock() }
	var targets []saga.Target
	rigs := map[string]*sagaRig{}
	for _, typ := range []string{"conformance.TypeA", "conformance.TypeB"} {
		st, err := saga.Open(e, testSaga(typ, fired))
		if err != nil {
			t.Fatalf("saga.Open: %v", err)
		}
		targets = append(targets, st)
		rigs[typ] = &sagaRig{e: e, st: st}
	}
	// Due order: a-1, b-1, a-2, b-2.
	rigs["conformance.TypeA"].apply(t, sagaOpened{ID: "a-1", ArmMs: -5000})
	rigs["conformance.TypeB"].apply(t, sagaOpened{ID: "b-1", ArmMs: -4000})
	rigs["conformance.TypeA"].apply(t, sagaOpened{ID: "a-2", ArmMs: -3000})
	rigs["conformance.TypeB"].apply(t, sagaOpened{ID: "b-2", ArmMs: -2000})
	d, err := saga.NewDeadlines(e, targets, saga.WithBatch(2), saga.WithPollInterval(20*time.Millisecond),
		saga.WithLeaseDuration(testtime.D(5*time.Second)))
	if err != nil {
		t.Fatalf("NewDeadlines: %v", err)
	}
	r := rigs["conformance.TypeA"]
	if n := r.poll(t, d); n != 2 {
		t.Fatalf("the first poll of a batch of 2 delivered %d", n)
	}
	if n := r.poll(t, d); n != 2 {
		t.Fatalf("the second poll delivered %d, want the other 2", n)
	}
	mu.Lock()
	defer mu.Unlock()
	if got := strings.Join(order, ","); got != "a-1,b-1,a-2,b-2" {
		t.Errorf("delivered %s, want a-1,b-1,a-2,b-2 (due_at order across both saga types)", got)
	}
}
