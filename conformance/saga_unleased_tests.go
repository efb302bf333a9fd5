package conformance

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/saga"
	"github.com/tidemarkdb/tidemark/internal/testtime"
)

// sagaLedger is the table the unleased deliverers' deadline handler
// writes one row to per delivery, in the delivery's transaction.
const sagaLedger = "SAGA_FIRED_LEDGER"

// sagaUnleasedArgs are the arguments of the "saga-deadlines-unleased"
// worker: a deliverer whose lease (saga.WithLease) is always held, so it
// polls whatever the other processes do.
type sagaUnleasedArgs struct {
	SagaType string `json:"saga_type"`
	// Barrier is a directory each worker writes a file to; it starts
	// polling once Parties files are there (all processes poll together).
	Barrier string `json:"barrier"`
	Parties int    `json:"parties"`
}

// alwaysHeld is an application's lease that every process holds at once.
type alwaysHeld struct{}

func (alwaysHeld) Held(context.Context) (bool, error) { return true, nil }

func init() { RegisterWorkerAction("saga-deadlines-unleased", sagaUnleasedWorker) }

func sagaUnleasedWorker(ctx context.Context, db *sql.DB, job WorkerJob) (any, error) {
	e, args, err := openJob[sagaUnleasedArgs](ctx, db, job)
	if err != nil {
		return nil, err
	}
	defer e.Close()
	pid := os.Getpid()
	st, err := saga.Open(e, testSagaCtx(args.SagaType, func(c saga.Context) error {
		_, err := e.ExecText(c, c.Tx(), "INSERT INTO "+sagaLedger+" (saga_id, owner_pid) VALUES (#{id}, #{pid})", nil,
			map[string]any{"id": c.SagaID(), "pid": pid})
		return err
	}))
	if err != nil {
		return nil, err
	}
	d, err := saga.NewDeadlines(e, []saga.Target{st}, saga.WithPollInterval(10*time.Millisecond), saga.WithLease(alwaysHeld{}))
	if err != nil {
		return nil, err
	}
	if err := awaitParties(ctx, args.Barrier, args.Parties); err != nil {
		return nil, err
	}
	count, err := e.CompileText(`SELECT COUNT(*) FROM ${saga_deadlines_table}`, nil)
	if err != nil {
		return nil, err
	}
	res := sagaDeadlineResult{}
	var lastErr error
	for ctx.Err() == nil {
		n, err := d.Poll(ctx)
		res.Delivered += n
		if err != nil {
			lastErr = err
		}
		var left int64
		if err := e.QueryRowCompiled(ctx, e.DB, count, nil).Scan(&left); err != nil {
			return nil, err
		}
		if left == 0 { // a failed delivery was tried again until none is left
			return res, nil
		}
		_ = engine.Sleep(ctx, 10*time.Millisecond)
	}
	return nil, errors.Join(ctx.Err(), lastErr)
}

// awaitParties writes this process's file to dir and waits until parties
// files are there.
func awaitParties(ctx context.Context, dir string, parties int) error {
	if err := os.WriteFile(filepath.Join(dir, fmt.Sprint(os.Getpid())), nil, 0o600); err != nil {
		return err
	}
	return testtime.Poll(ctx, "every process at the barrier", time.Minute, 5*time.Millisecond, func() (bool, error) {
		got, err := os.ReadDir(dir)
		return len(got) >= parties, err
	}, nil)
}

// testSagaDeadlineOnceWithoutLease: three OS processes deliver the same
// due deadlines at once, each under an application lease that is always
// held (no lock row, no single holder): exactly-once rests on the
// delivery's DELETE alone. Each delivery writes a ledger row in its own
// transaction; every deadline has exactly one, its instance fired once,
// the processes' counts add up, and the lock row was never taken.
func testSagaDeadlineOnceWithoutLease(t T, env *Env) {
	r := newSagaRig(t, env)
	ctx := context.Background()
	if _, err := r.e.ExecText(ctx, r.e.DB, "CREATE TABLE "+sagaLedger+" (saga_id VARCHAR(255) NOT NULL, owner_pid INTEGER NOT NULL)", nil, nil); err != nil {
		t.Fatalf("create the ledger: %v", err)
	}
	ids := scheduleDue(t, r, "unleased", 30)
	dir, err := os.MkdirTemp("", "tidemark-saga-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	raw, _ := json.Marshal(sagaUnleasedArgs{SagaType: r.st.SagaType(), Barrier: dir, Parties: 3})
	job := WorkerJob{Action: "saga-deadlines-unleased", Catalogue: env.Catalogue, Driver: env.Driver, DSN: env.DSN, Config: defaultConfig(env), Args: raw}
	res := runWorkers(t, []WorkerJob{job, job, job})
	total := 0
	for i, w := range res {
		var got sagaDeadlineResult
		if !w.OK || json.Unmarshal(w.Data, &got) != nil {
			t.Fatalf("worker %d: %+v", i, w)
		}
		t.Logf("process %d delivered %d", i, got.Delivered)
		total += got.Delivered
	}
	if total != len(ids) {
		t.Errorf("the processes delivered %d deadlines in all, want %d", total, len(ids))
	}
	ledger := ledgerCounts(t, r.e)
	for _, id := range ids {
		if ledger[id] != 1 {
			t.Errorf("%s: %d deliveries committed, want exactly 1", id, ledger[id])
		}
	}
	if len(ledger) != len(ids) {
		t.Errorf("the ledger names %d instances, want %d", len(ledger), len(ids))
	}
	r.firedOnce(t, ids)
	var locks int
	if err := r.e.DB.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+r.e.Names.Shared["saga_deadline_locks_table"]).Scan(&locks); err != nil || locks != 0 {
		t.Errorf("the deadline lock table holds %d rows (%v), want none: the deliverers ran on their own lease", locks, err)
	}
}

// ledgerCounts is the number of ledger rows per saga id.
func ledgerCounts(t T, e *engine.Engine) map[string]int {
	t.Helper()
	rows, err := e.DB.QueryContext(context.Background(), "SELECT saga_id, COUNT(*) FROM "+sagaLedger+" GROUP BY saga_id")
	if err != nil {
		t.Fatalf("read the ledger: %v", err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var id string
		var n int
		if err := rows.Scan(&id, &n); err != nil {
			t.Fatalf("read the ledger: %v", err)
		}
		out[id] = n
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("read the ledger: %v", err)
	}
	return out
}
