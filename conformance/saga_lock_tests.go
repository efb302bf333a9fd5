package conformance

import (
	"context"
	"database/sql"
	"time"

	"github.com/tidemarkdb/tidemark/core/engine"
)

// testSagaStartsDoNotLockEachOther: two transactions each starting a new
// instance with a deadline, on neighbouring saga ids, do not wait for each
// other: the second commits while the first is still open. A start that
// first deletes the deadline it is about to schedule (the replace of an
// existing one) locks the gap on InnoDB's REPEATABLE READ, and the other
// start's insert then waits for the first transaction (the server's lock
// wait timeout ends the wait with an error).
func testSagaStartsDoNotLockEachOther(t T, env *Env) {
	if env.Catalogue.Locks.SerializesWriters {
		skipf(t, "the engine serialises writers (Locks.SerializesWriters): a second transaction cannot write while the first is open")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // hang guard
	defer cancel()
	r := newSagaRig(t, env)
	base := newID(t)
	first, second := base+"-2", base+"-3"
	begin := func() *sql.Tx {
		tx, err := r.e.BeginTx(ctx, engine.OpAppend)
		if err != nil {
			t.Fatal(err)
		}
		return tx
	}
	txA := begin()
	defer func() { _ = txA.Rollback() }()
	if err := r.st.Apply(ctx, txA, sagaRecord(t, sagaOpened{ID: first, ArmMs: 3_600_000})); err != nil {
		t.Fatalf("starting %s: %v", first, err)
	}
	txB := begin()
	defer func() { _ = txB.Rollback() }()
	if err := r.st.Apply(ctx, txB, sagaRecord(t, sagaOpened{ID: second, ArmMs: 3_600_000})); err != nil {
		t.Fatalf("starting %s while the start of %s is open: %v", second, first, err)
	}
	if err := txB.Commit(); err != nil {
		t.Fatalf("committing the start of %s while the start of %s is open: %v", second, first, err)
	}
	if err := txA.Commit(); err != nil {
		t.Fatalf("committing the start of %s: %v", first, err)
	}
	for _, id := range []string{first, second} {
		if _, ok := r.get(t, id); !ok {
			t.Errorf("instance %s missing", id)
		}
		n, err := r.st.PendingDeadlines(ctx, id)
		if err != nil || n != 1 {
			t.Errorf("%s: %d pending deadlines (%v), want 1", id, n, err)
		}
	}
}
