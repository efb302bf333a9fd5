package conformance

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/saga"
)

// wrapCodec is an application's codec: JSON inside an envelope, so what
// it wrote is recognisable in the table.
type wrapCodec struct{}

type envelope struct {
	Codec string          `json:"codec"`
	V     json.RawMessage `json:"v"`
}

func (wrapCodec) Marshal(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return json.Marshal(envelope{Codec: "conformance", V: b})
}

// Unmarshal opens an envelope; anything else (the events the saga
// decodes with its codec too) is plain JSON.
func (wrapCodec) Unmarshal(data []byte, v any) error {
	var env envelope
	if err := json.Unmarshal(data, &env); err == nil && env.Codec == "conformance" {
		return json.Unmarshal(env.V, v)
	}
	return json.Unmarshal(data, v)
}

// codecSaga starts from WithInit's state, schedules two deadlines with
// payloads, and cancels both with CancelAll on sagaDisarm.
func codecSaga() *saga.Saga[sagaState] {
	s := saga.New[sagaState]("conformance.Codec", saga.WithCodec(wrapCodec{}),
		saga.WithInit(func(sagaID string) sagaState { return sagaState{Steps: 100 + len(sagaID)} }))
	saga.StartOn(s, func(e sagaOpened) string { return e.ID }, func(ctx saga.Context, _ sagaOpened, st *sagaState) error {
		st.Opened++
		if err := saga.Schedule(ctx, "a", saga.In(time.Hour), "payload-a"); err != nil {
			return err
		}
		return saga.Schedule(ctx, "b", saga.In(time.Hour), "payload-b")
	})
	saga.On(s, func(e sagaDisarm) string { return e.ID }, func(ctx saga.Context, _ sagaDisarm, st *sagaState) error {
		st.Disarms++
		return saga.CancelAll(ctx)
	})
	for _, name := range []string{"a", "b"} {
		saga.OnDeadline(s, name, func(saga.Context, string, *sagaState) error { return nil })
	}
	return s
}

// testSagaCodecInitCancelAll: WithCodec's encoding is what the instance
// and deadline rows hold and what Get decodes; WithInit gives a new
// instance's state (a WithInit of another state type is refused at Open);
// CancelAll deletes every pending deadline of the instance in the
// handler's transaction and nothing else (the saga stays open); outside a
// handler it is ErrNoScope.
func testSagaCodecInitCancelAll(t T, env *Env) {
	e := openEngine(t, env, defaultConfig(env))
	st, err := saga.Open(e, codecSaga())
	if err != nil {
		t.Fatalf("saga.Open: %v", err)
	}
	r := &sagaRig{e: e}
	applyTo := func(ev any) {
		t.Helper()
		if err := e.InTx(context.Background(), engine.OpWrite, engine.TransientRetry{Unbounded: true}, func(tx *sql.Tx) error {
			return st.Apply(context.Background(), tx, sagaRecord(t, ev))
		}); err != nil {
			t.Fatalf("apply %T: %v", ev, err)
		}
	}
	applyTo(sagaOpened{ID: "cd-1"})
	in, ok, err := st.Get(context.Background(), "cd-1")
	if err != nil || !ok || in.State != (sagaState{Opened: 1, Steps: 100 + len("cd-1")}) {
		t.Errorf("cd-1 = %+v (found %v, %v), want WithInit's state with one start", in, ok, err)
	}
	if raw := r.rawText(t, `SELECT state_json FROM ${saga_instances_table} WHERE saga_type = #{saga_type} AND saga_id = #{saga_id}`, "conformance.Codec", "cd-1"); !strings.Contains(raw, `"codec":"conformance"`) {
		t.Errorf("state_json %s was not written by the saga's codec", raw)
	}
	if raw := r.rawText(t, `SELECT payload_json FROM ${saga_deadlines_table} WHERE saga_type = #{saga_type} AND saga_id = #{saga_id} AND name = 'a'`, "conformance.Codec", "cd-1"); !strings.Contains(raw, `"codec":"conformance"`) || !strings.Contains(raw, "payload-a") {
		t.Errorf("payload_json %s was not written by the saga's codec", raw)
	}
	if n, err := st.PendingDeadlines(context.Background(), "cd-1"); err != nil || n != 2 {
		t.Errorf("pending after the start: %d (%v), want 2", n, err)
	}
	applyTo(sagaDisarm{ID: "cd-1"})
	if n, err := st.PendingDeadlines(context.Background(), "cd-1"); err != nil || n != 0 {
		t.Errorf("pending after CancelAll: %d (%v), want 0", n, err)
	}
	if in, _, _ := st.Get(context.Background(), "cd-1"); in.Completed || in.State.Disarms != 1 {
		t.Errorf("after CancelAll: %+v, want open with one disarm", in)
	}
	if err := saga.CancelAll(saga.Context{Context: context.Background()}); !errors.Is(err, saga.ErrNoScope) {
		t.Errorf("CancelAll outside a handler: %v, want ErrNoScope", err)
	}
	bad := saga.New[sagaState]("conformance.BadInit", saga.WithInit(func(string) int { return 0 }))
	saga.StartOn(bad, func(e sagaOpened) string { return e.ID }, func(saga.Context, sagaOpened, *sagaState) error { return nil })
	if _, err := saga.Open(e, bad); !errors.Is(err, saga.ErrInvalidDeclaration) {
		t.Errorf("WithInit of another state type: %v, want ErrInvalidDeclaration", err)
	}
}

// rawText reads one text column of one saga row as stored.
func (r *sagaRig) rawText(t T, query, sagaType, sagaID string) string {
	t.Helper()
	c, err := r.e.CompileText(query, nil)
	if err != nil {
		t.Fatal(err)
	}
	args, err := c.Args(map[string]any{"saga_type": sagaType, "saga_id": sagaID})
	if err != nil {
		t.Fatal(err)
	}
	var s string
	if err := r.e.DB.QueryRowContext(context.Background(), c.SQL, args...).Scan(&s); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return s
}
