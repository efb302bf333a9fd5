package conformance

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/tidemarkdb/tidemark/core/consumer"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/eventstore"
	"github.com/tidemarkdb/tidemark/internal/testtime"
)

// sharedArgs are the arguments of the "consumer-shared" worker action:
// one instance of a consumer that other processes run too.
type sharedArgs struct {
	// Marker is a file the killed instance creates in the middle of its
	// apply; the others start polling once it exists, so the kill always
	// lands while they run.
	Marker string `json:"marker"`
	// KillAfter > 0: this instance is the one killed, with SIGKILL, in
	// that apply (its row written, its transaction not committed), once
	// the others have committed OthersFirst rows (or at once where its
	// open transaction holds them off: othersCanCommit).
	KillAfter   int `json:"kill_after"`
	OthersFirst int `json:"others_first"`
	Want        int `json:"want"`
	// Instances is how many processes run the consumer. The killed one
	// starts applying once every one has opened its engine: engine.Open
	// runs the schema's CREATE … IF NOT EXISTS, which on HSQLDB waits for
	// every open transaction and holds up other sessions' statements
	// meanwhile, so an open behind the apply the killed instance keeps open
	// while it counts the others' rows hung the test (2 runs in 116
	// with 4 CPU burners beside it, until RunWorkers' hang bound).
	Instances int `json:"instances"`
}

func init() {
	RegisterWorkerAction("consumer-shared", runSharedConsumer)
}

// sharedCount is how many distinct positions the shared consumer applied.
func sharedCount(ctx context.Context, db *sql.DB) (int, error) {
	var n int
	err := db.QueryRowContext(ctx, `SELECT COUNT(DISTINCT pos) FROM `+tortureTable+` WHERE consumer_name = 'shared'`).Scan(&n)
	return n, err
}

// runSharedConsumer runs one instance of the consumer "shared"
// (Transactional, 4 workers) until every position is applied.
func runSharedConsumer(ctx context.Context, db *sql.DB, job WorkerJob) (any, error) {
	e, args, err := openJob[sharedArgs](ctx, db, job)
	if err != nil {
		return nil, err
	}
	defer e.Close()
	if err := os.WriteFile(fmt.Sprintf("%s.opened.%d", args.Marker, os.Getpid()), nil, 0o600); err != nil {
		return nil, err
	}
	if args.KillAfter == 0 {
		awaitFile(args.Marker, time.Minute) // hang guard only
	} else {
		awaitFiles(args.Marker+".opened.*", args.Instances, time.Minute) // hang guard only
	}
	invoked := make(chan struct{}, 1<<20)
	r, err := consumer.NewRunner(ctx, consumer.NewRegistry(e, nil), consumer.Options{Type: "torture", Name: "shared", Transactional: true,
		PageSize: 16,
		Routes: []consumer.Route{consumer.On(consumer.EventStore(eventstore.New(e, nil), nil), func(ctx context.Context, tx *sql.Tx, m consumer.Msg[eventstore.Recorded]) error {
			if _, err := tx.ExecContext(ctx, fmt.Sprintf(`INSERT INTO %s (consumer_name, pos) VALUES ('shared', %d)`, tortureTable, m.Position)); err != nil {
				return err
			}
			invoked <- struct{}{}
			if args.KillAfter > 0 && len(invoked) == args.KillAfter {
				killMidApply(ctx, db, e, args)
			}
			return nil
		})}})
	if err != nil {
		return nil, err
	}
	n := 0
	for range 10000 {
		if _, err := r.Poll(ctx); err != nil {
			return nil, err
		}
		var err error
		if n, err = sharedCount(ctx, db); err != nil {
			return nil, err
		}
		if n >= args.Want {
			return n, nil
		}
	}
	return nil, fmt.Errorf("shared consumer did not catch up in 10000 polls: %d of %d applied", n, args.Want)
}

// killMidApply lets the other instances go, waits until they have
// committed applies of their own (bounded: 20 s), and kills this process.
func killMidApply(ctx context.Context, db *sql.DB, e *engine.Engine, args sharedArgs) {
	_ = os.WriteFile(args.Marker, nil, 0o600)
	if othersCanCommit(e) {
		deadline := testtime.Deadline(20 * time.Second)
		for time.Now().Before(deadline) {
			if n, err := sharedCount(ctx, db); err == nil && n >= args.OthersFirst {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL) // kill -9, mid-apply
	select {}
}

// othersCanCommit tells whether other instances can commit applies while
// this one holds an apply's transaction open: not where the engine
// serialises writers (the open transaction holds the one write lock), nor
// where readers wait for writers (its locks hold the others' applies, and
// even the count of their rows waits for it: the wait would never end).
func othersCanCommit(e *engine.Engine) bool {
	return !e.Cat.Locks.SerializesWriters && !e.Cat.Locks.ReadersWaitForWriters
}

// awaitFiles waits until n files match pattern, or bound passes.
func awaitFiles(pattern string, n int, bound time.Duration) {
	awaitUntil(bound, func() bool {
		m, err := filepath.Glob(pattern)
		return err == nil && len(m) >= n
	})
}

// awaitFile waits until path exists, or bound passes.
func awaitFile(path string, bound time.Duration) {
	awaitUntil(bound, func() bool {
		_, err := os.Stat(path)
		return err == nil
	})
}

// awaitUntil polls cond every 10 ms until it holds or bound passes (a hang
// guard: the callers go on either way).
func awaitUntil(bound time.Duration, cond func() bool) {
	for deadline := testtime.Deadline(bound); time.Now().Before(deadline) && !cond(); {
		time.Sleep(10 * time.Millisecond)
	}
}

// testConsumerSharedTorture runs ONE consumer in three OS processes at
// once over the same checkpoints; one is killed with SIGKILL in the middle
// of an apply while the others apply. With the handler writing in the
// checkpoint's transaction, every committed event is applied exactly once
// in all: an apply whose checkpoint another instance already moved past
// rolls back.
func testConsumerSharedTorture(t T, env *Env) {
	s, e := openStore(t, env)
	if _, err := env.DB.Exec(`CREATE TABLE ` + tortureTable + ` (consumer_name VARCHAR(64) NOT NULL, pos BIGINT NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i := range 16 {
		ids = append(ids, fmt.Sprintf("s-%d", i))
	}
	positions := appendSpread(t, s, e, ids, 240)
	dir, err := os.MkdirTemp("", "tidemark-shared-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	marker := dir + "/killed"
	job := func(kill int) WorkerJob {
		raw, _ := json.Marshal(sharedArgs{Marker: marker, KillAfter: kill, OthersFirst: 20, Want: len(positions), Instances: 3})
		return WorkerJob{Action: "consumer-shared", Catalogue: env.Catalogue, Driver: env.Driver, DSN: env.DSN, Config: defaultConfig(env), Args: raw}
	}
	res, err := RunWorkers(context.Background(), []WorkerJob{job(0), job(0), job(3)})
	if errors.Is(err, errNoWorkers) {
		skipf(t, "%v", err)
	}
	if err == nil || !strings.Contains(err.Error(), "worker ended without a result") || errors.Is(err, ErrWorkerHung) {
		t.Fatalf("want the third instance killed mid-apply, got %v (results %+v)", err, res)
	}
	// The two survivors' results were read before the killed one's end
	// (RunWorkers reads in job order), so both finished: every position
	// is applied. The table tells how often.
	rows, err := env.DB.Query(`SELECT pos, COUNT(*) FROM ` + tortureTable + ` WHERE consumer_name = 'shared' GROUP BY pos`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	applied := 0
	for rows.Next() {
		var pos int64
		var n int
		if err := rows.Scan(&pos, &n); err != nil {
			t.Fatal(err)
		}
		applied++
		if n != 1 {
			t.Errorf("position %d applied %d times by the three instances", pos, n)
		}
	}
	if applied != len(positions) {
		t.Errorf("%d positions applied, want %d", applied, len(positions))
	}
}
