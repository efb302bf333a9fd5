package conformance

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tidemarkdb/tidemark/core/eventstore"
	"github.com/tidemarkdb/tidemark/core/sqlerr"
	"github.com/tidemarkdb/tidemark/internal/testtime"
)

// transientTests provoke real transient errors on the engine and check that
// they are typed and retried, and count what the advancer costs.
func transientTests() []Test {
	return []Test{
		{"eventstore/retry_tx_deadlock", testRetryTxDeadlock},
		{"hwm/cycle_cost", testHWMCycleCost},
	}
}

const deadlockTable = "tm_deadlock_rows"

// testRetryTxDeadlock makes two transactions deadlock for real: each
// updates its own row, appends an event with AppendTx, then updates the
// other's row. The engine picks a victim (a deadlock, or a serialization
// failure on MVCC engines); Store.RetryTx runs the victim's whole
// transaction again. Both must then have committed exactly once: each row
// updated twice, each event stored once; and the victim's error must be
// typed transient (errors.Is(err, sqlerr.ErrTransient)).
func testRetryTxDeadlock(t T, env *Env) {
	if env.Catalogue.Locks.SerializesWriters {
		skipf(t, "the engine runs one writing transaction at a time: two writers cannot deadlock")
	}
	store, e := openStore(t, env)
	ctx, cancel := testtime.Context(context.Background(), 2*time.Minute)
	defer cancel()
	for _, q := range []string{
		`CREATE TABLE ` + deadlockTable + ` (k INTEGER NOT NULL PRIMARY KEY, v INTEGER NOT NULL)`,
		`INSERT INTO ` + deadlockTable + ` (k, v) VALUES (1, 0)`,
		`INSERT INTO ` + deadlockTable + ` (k, v) VALUES (2, 0)`,
	} {
		if _, err := env.DB.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	var attempts atomic.Int32
	var seenMu sync.Mutex
	var seen []error // the errors that made RetryTx run a transaction again
	locked := [2]chan struct{}{make(chan struct{}), make(chan struct{})}
	ids := [2]string{newID(t), newID(t)}
	run := func(me int) error {
		first := true
		return store.RetryTx(ctx, func(tx *sql.Tx) error {
			attempts.Add(1)
			err := deadlockSide(ctx, tx, store, me, ids[me], first, locked)
			first = false
			if err != nil {
				seenMu.Lock()
				seen = append(seen, err)
				seenMu.Unlock()
			}
			return err
		})
	}
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range 2 {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = run(i) }()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("transaction %d: RetryTx gave up: %v (errors seen: %v)", i+1, err, seen)
		}
	}
	if attempts.Load() < 3 || len(seen) == 0 {
		t.Fatalf("%d tries and no error: the interleaving did not deadlock, the test proves nothing", attempts.Load())
	}
	for _, err := range seen {
		if !errors.Is(e.Errors.Wrap(err), sqlerr.ErrTransient) {
			t.Errorf("the deadlock victim's error is not transient: %T: %v", err, err)
		}
	}
	t.Logf("%d tries; the victim saw: %v", attempts.Load(), seen)
	for k := 1; k <= 2; k++ {
		var v int
		if err := env.DB.QueryRowContext(ctx, fmt.Sprintf(`SELECT v FROM %s WHERE k = %d`, deadlockTable, k)).Scan(&v); err != nil {
			t.Fatal(err)
		}
		if v != 2 {
			t.Errorf("row %d updated %d times, want 2 (once by each committed transaction)", k, v)
		}
	}
	for i := range 2 {
		evs, err := store.Load(ctx, "bank.Account", fmt.Sprintf("deadlock-%d", i), -1)
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) != 1 || evs[0].ID != ids[i] {
			t.Errorf("stream deadlock-%d holds %d events, want its one event %s", i, len(evs), ids[i])
		}
	}
}

// deadlockSide is one transaction of testRetryTxDeadlock. On the first try
// each side waits (bounded: a hang guard, not an assertion) until the other
// holds its row, so the appends and the second updates cross (on a counter
// row the second append already waits for the first transaction).
func deadlockSide(ctx context.Context, tx *sql.Tx, store *eventstore.Store, me int, id string, first bool, locked [2]chan struct{}) error {
	own, other := me+1, 2-me
	upd := `UPDATE ` + deadlockTable + ` SET v = v + 1 WHERE k = `
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("%s%d", upd, own)); err != nil {
		return err
	}
	if first {
		close(locked[me])
		select {
		case <-locked[1-me]:
		case <-testtime.After(20 * time.Second):
		case <-ctx.Done():
		}
	}
	if _, err := store.AppendTx(ctx, tx, eventstore.Stream{AggregateType: "bank.Account",
		AggregateID: fmt.Sprintf("deadlock-%d", me), Expected: eventstore.NoStream,
		Events: []eventstore.Event{{ID: id, Type: "Touched", Payload: []byte(`{}`)}}}); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, fmt.Sprintf("%s%d", upd, other))
	return err
}
