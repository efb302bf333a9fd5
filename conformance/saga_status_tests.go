package conformance

import (
	"context"
	"errors"
	"time"

	"github.com/tidemarkdb/tidemark/core/saga"
)

// testSagaOperatorStatus: the operator's reads need no declaration: counts
// per saga type (active, completed, pending deadlines with the next due
// time), the deadline lock's holder once a deliverer polled, a list of
// instances; PurgeType refuses a table the engine does not know before
// any SQL.
func testSagaOperatorStatus(t T, env *Env) {
	r := newSagaRig(t, env)
	ctx := context.Background()
	st, err := saga.ReadStatus(ctx, r.e)
	if err != nil || len(st.Types) != 0 || st.Lock != nil {
		t.Fatalf("status of an empty database = %+v, %v; want nothing", st, err)
	}
	r.apply(t, sagaOpened{ID: "s-1", ArmMs: 3600_000})
	r.apply(t, sagaOpened{ID: "s-2"})
	r.apply(t, sagaOpened{ID: "s-3"})
	r.apply(t, sagaDone{ID: "s-3"})
	d := r.deliverer(t)
	r.poll(t, d) // takes the lock; nothing is due
	st, err = saga.ReadStatus(ctx, r.e)
	if err != nil || len(st.Types) != 1 {
		t.Fatalf("status = %+v, %v; want one saga type", st, err)
	}
	ts := st.Types[0]
	if ts.SagaType != r.st.SagaType() || ts.Active != 2 || ts.Completed != 1 || ts.Deadlines != 1 || ts.NextDue == nil {
		t.Errorf("status = %+v; want %s: 2 active, 1 completed, 1 deadline with its due time", ts, r.st.SagaType())
	} else if due := ts.NextDue.Sub(r.dbNow(t)); due < 50*time.Minute || due > 61*time.Minute {
		t.Errorf("next due in %v by the database clock, want about 1 h", due)
	}
	if ts.Overdue != 0 {
		t.Errorf("overdue %d with nothing due yet, want 0", ts.Overdue)
	}
	// A deadline due a minute ago that no poll delivered yet is overdue.
	r.apply(t, sagaOpened{ID: "s-4", ArmMs: -60_000})
	if st2, err := saga.ReadStatus(ctx, r.e); err != nil || len(st2.Types) != 1 || st2.Types[0].Deadlines != 2 || st2.Types[0].Overdue != 1 {
		t.Errorf("status after a deadline due a minute ago = %+v, %v; want 2 pending, 1 overdue", st2.Types, err)
	}
	if st.Lock == nil || st.Lock.Owner != d.Owner() || !st.Lock.Live {
		t.Errorf("lock = %+v, want held (live) by %s", st.Lock, d.Owner())
	}
	list, err := saga.List(ctx, r.e, r.st.SagaType(), 2)
	if err != nil || len(list) != 2 || list[0].SagaID != "s-1" || list[1].SagaID != "s-2" || list[0].Completed {
		t.Errorf("List(limit 2) = %+v, %v; want s-1, s-2 (active)", list, err)
	}
	if all, err := saga.List(ctx, r.e, "", 10); err != nil || len(all) != 4 || !all[2].Completed {
		t.Errorf("List(all) = %+v, %v; want 4 with s-3 completed", all, err)
	}
	if other, err := saga.List(ctx, r.e, "nobody", 10); err != nil || len(other) != 0 {
		t.Errorf("List(nobody) = %+v, %v; want none", other, err)
	}
	if all, err := saga.List(ctx, r.e, "", 3); err != nil || len(all) != 3 {
		t.Errorf("List(all, limit 3) = %+v, %v; want 3", all, err)
	}
	if _, err := saga.List(ctx, r.e, "", 0); !errors.Is(err, saga.ErrInvalidDeclaration) {
		t.Errorf("List(limit 0): %v, want ErrInvalidDeclaration", err)
	}
	if _, err := saga.PurgeType(ctx, r.e, "NOT_A_SAGA_TABLE", r.st.SagaType(), 0); !errors.Is(err, saga.ErrInvalidDeclaration) {
		t.Errorf("PurgeType on an unknown table: %v, want ErrInvalidDeclaration", err)
	}
}
