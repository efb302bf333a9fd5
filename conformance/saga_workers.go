package conformance

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/saga"
	"github.com/tidemarkdb/tidemark/internal/testtime"
)

// sagaDeadlineArgs are the arguments of the "saga-deadlines" worker: one
// process polling the suite saga's deadlines until none is pending.
type sagaDeadlineArgs struct {
	SagaType string `json:"saga_type"`
	LeaseMs  int64  `json:"lease_ms"`
	// KillAfter > 0: the process kills itself (SIGKILL) inside its
	// KillAfter-th deadline handler, after creating Marker.
	KillAfter int    `json:"kill_after"`
	Marker    string `json:"marker"`
	// WaitMarker: start polling only once Marker exists (the killer went
	// first and died holding the lock).
	WaitMarker bool `json:"wait_marker"`
}

// sagaDeadlineResult is what a deadline worker reports.
type sagaDeadlineResult struct {
	Delivered int `json:"delivered"`
}

func init() { RegisterWorkerAction("saga-deadlines", sagaDeadlineWorker) }

func sagaDeadlineWorker(ctx context.Context, db *sql.DB, job WorkerJob) (any, error) {
	e, args, err := openJob[sagaDeadlineArgs](ctx, db, job)
	if err != nil {
		return nil, err
	}
	defer e.Close()
	var fired atomic.Int64
	onFire := func(string) {
		if n := fired.Add(1); args.KillAfter > 0 && n == int64(args.KillAfter) {
			if f, err := os.OpenFile(args.Marker, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600); err == nil {
				f.Close()
				_ = syscall.Kill(os.Getpid(), syscall.SIGKILL) // kill -9, mid-delivery
			}
		}
	}
	st, err := saga.Open(e, testSaga(args.SagaType, onFire))
	if err != nil {
		return nil, err
	}
	if args.WaitMarker {
		if err := testtime.Poll(ctx, "the killer's marker", time.Minute, 10*time.Millisecond, func() (bool, error) {
			_, err := os.Stat(args.Marker)
			return err == nil, nil
		}, nil); err != nil {
			return nil, err
		}
	}
	d, err := saga.NewDeadlines(e, []saga.Target{st}, saga.WithPollInterval(10*time.Millisecond),
		saga.WithLeaseDuration(time.Duration(args.LeaseMs)*time.Millisecond))
	if err != nil {
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
		if left == 0 {
			return res, nil
		}
		_ = engine.Sleep(ctx, 10*time.Millisecond)
	}
	return nil, errors.Join(ctx.Err(), lastErr)
}

// scheduleDue starts n instances of the suite saga, each with its
// timeout already due.
func scheduleDue(t T, r *sagaRig, prefix string, n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("%s-%d", prefix, i)
		r.apply(t, sagaOpened{ID: ids[i], ArmMs: -1000})
	}
	return ids
}

func (r *sagaRig) deadlineJob(env *Env, args sagaDeadlineArgs) WorkerJob {
	args.SagaType = r.st.SagaType()
	raw, _ := json.Marshal(args)
	return WorkerJob{Action: "saga-deadlines", Catalogue: env.Catalogue, Driver: env.Driver, DSN: env.DSN, Config: defaultConfig(env), Args: raw}
}

// firedOnce checks every instance's timeout fired exactly once.
func (r *sagaRig) firedOnce(t T, ids []string) {
	t.Helper()
	for _, id := range ids {
		if in, ok := r.get(t, id); !ok || in.State.Fired != 1 {
			t.Errorf("%s fired %d times, want once", id, in.State.Fired)
		}
	}
}

// testSagaDeadlineThreeProcesses: three processes poll the same due
// deadlines; each is delivered exactly once.
func testSagaDeadlineThreeProcesses(t T, env *Env) {
	r := newSagaRig(t, env)
	ids := scheduleDue(t, r, "three", 12)
	job := r.deadlineJob(env, sagaDeadlineArgs{LeaseMs: testtime.D(2 * time.Second).Milliseconds()})
	res := runWorkers(t, []WorkerJob{job, job, job})
	total := 0
	for i, w := range res {
		var got sagaDeadlineResult
		if !w.OK || json.Unmarshal(w.Data, &got) != nil {
			t.Fatalf("worker %d: %+v", i, w)
		}
		total += got.Delivered
	}
	if total != len(ids) {
		t.Errorf("the processes delivered %d deadlines in all, want %d", total, len(ids))
	}
	r.firedOnce(t, ids)
}

// testSagaDeadlineHolderKilled: the lock holder is killed (-9) inside a
// deadline's handler after committing one delivery; its open transaction
// rolls back, its lease expires on the database clock, and the other
// processes deliver the rest: every deadline exactly once.
func testSagaDeadlineHolderKilled(t T, env *Env) {
	r := newSagaRig(t, env)
	ids := scheduleDue(t, r, "killed", 6)
	dir, err := os.MkdirTemp("", "tidemark-saga-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	args := sagaDeadlineArgs{LeaseMs: testtime.D(1500 * time.Millisecond).Milliseconds(), Marker: dir + "/killed"}
	killer := args
	killer.KillAfter = 2
	survivor := args
	survivor.WaitMarker = true
	res, err := RunWorkers(context.Background(), []WorkerJob{r.deadlineJob(env, survivor), r.deadlineJob(env, survivor), r.deadlineJob(env, killer)})
	if errors.Is(err, errNoWorkers) {
		skipf(t, "%v", err)
	}
	if err == nil || !strings.Contains(err.Error(), "worker ended without a result") || errors.Is(err, ErrWorkerHung) {
		t.Fatalf("want the holder killed mid-delivery, got %v (results %+v)", err, res)
	}
	total := 0
	for i, w := range res[:2] {
		var got sagaDeadlineResult
		if !w.OK || json.Unmarshal(w.Data, &got) != nil {
			t.Fatalf("survivor %d: %+v", i, w)
		}
		total += got.Delivered
	}
	// The killer committed one delivery; the survivors the rest.
	if total != len(ids)-1 {
		t.Errorf("the survivors delivered %d, want %d (all but the killer's one committed delivery)", total, len(ids)-1)
	}
	r.firedOnce(t, ids)
}
