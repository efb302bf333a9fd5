package conformance

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"

	"github.com/tidemarkdb/tidemark/core/consumer"
	"github.com/tidemarkdb/tidemark/core/eventstore"
)

// tortureTable records every apply of the torture test's consumers, in
// the apply's transaction; no key, so an apply made twice is two rows.
const tortureTable = "TM_TORTURE_APPLIED"

// tortureArgs are the arguments of the "consumer-run" worker action.
type tortureArgs struct {
	Name string `json:"name"`
	// KillAfter > 0: the process kills itself with SIGKILL in the middle
	// of that apply (its row written, its transaction not committed).
	KillAfter int `json:"kill_after"`
	// Want is how many distinct positions the consumer must have applied.
	Want int `json:"want"`
}

func init() {
	RegisterWorkerAction("consumer-run", runTortureConsumer)
}

// runTortureConsumer runs one consumer (Transactional, 4 workers) until
// it applied Want positions.
func runTortureConsumer(ctx context.Context, db *sql.DB, job WorkerJob) (any, error) {
	e, args, err := openJob[tortureArgs](ctx, db, job)
	if err != nil {
		return nil, err
	}
	defer e.Close()
	s := eventstore.New(e, nil)
	reg := consumer.NewRegistry(e, nil)
	applies := 0
	mu := make(chan struct{}, 1) // guards applies across the 4 workers
	r, err := consumer.NewRunner(ctx, reg, consumer.Options{Type: "torture", Name: args.Name, Transactional: true,
		PageSize: 16,
		Routes: []consumer.Route{consumer.On(consumer.EventStore(s, nil), func(ctx context.Context, tx *sql.Tx, m consumer.Msg[eventstore.Recorded]) error {
			if _, err := tx.ExecContext(ctx, fmt.Sprintf(`INSERT INTO %s (consumer_name, pos) VALUES ('%s', %d)`, tortureTable, args.Name, m.Position)); err != nil {
				return err
			}
			mu <- struct{}{}
			applies++
			kill := args.KillAfter > 0 && applies == args.KillAfter
			<-mu
			if kill {
				_ = syscall.Kill(os.Getpid(), syscall.SIGKILL) // kill -9, mid-apply
				select {}
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
		if err := db.QueryRowContext(ctx, fmt.Sprintf(`SELECT COUNT(DISTINCT pos) FROM %s WHERE consumer_name = '%s'`, tortureTable, args.Name)).Scan(&n); err != nil {
			return nil, err
		}
		if n >= args.Want {
			return n, nil
		}
	}
	return nil, fmt.Errorf("consumer did not catch up in 10000 polls: %d of %d applied", n, args.Want)
}

// testConsumerTorture runs three consumers as separate OS processes over
// one database; one is killed with SIGKILL mid-apply and restarted in a new
// process. Every committed event is applied exactly once by each. Without
// partition leases (the next issue) each process runs a consumer of its
// own over every partition.
func testConsumerTorture(t T, env *Env) {
	s, e := openStore(t, env)
	if _, err := env.DB.Exec(`CREATE TABLE ` + tortureTable + ` (consumer_name VARCHAR(64) NOT NULL, pos BIGINT NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i := range 12 {
		ids = append(ids, fmt.Sprintf("t-%d", i))
	}
	positions := appendSpread(t, s, e, ids, 120)
	job := func(name string, kill int) WorkerJob {
		raw, _ := json.Marshal(tortureArgs{Name: name, KillAfter: kill, Want: len(positions)})
		return WorkerJob{Action: "consumer-run", Catalogue: env.Catalogue, Driver: env.Driver, DSN: env.DSN, Config: defaultConfig(env), Args: raw}
	}
	// The killed process is the last job: RunWorkers reads the others'
	// results first.
	res, err := RunWorkers(context.Background(), []WorkerJob{job("a", 0), job("b", 0), job("c", 50)})
	if errors.Is(err, errNoWorkers) {
		skipf(t, "%v", err)
	}
	if err == nil || !strings.Contains(err.Error(), "worker ended without a result") || errors.Is(err, ErrWorkerHung) {
		t.Fatalf("want consumer c's process killed mid-apply, got %v (results %+v)", err, res)
	}
	t.Logf("consumer c's process killed mid-apply (%v); restarting it", err)
	res = runWorkers(t, []WorkerJob{job("c", 0)})
	if !res[0].OK {
		t.Fatalf("restarted consumer c: %s %s", res[0].ErrorKind, res[0].Error)
	}
	rows, err := env.DB.Query(`SELECT consumer_name, pos, COUNT(*) FROM ` + tortureTable + ` GROUP BY consumer_name, pos`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	got := map[string]int{}
	for rows.Next() {
		var name string
		var pos int64
		var n int
		if err := rows.Scan(&name, &pos, &n); err != nil {
			t.Fatal(err)
		}
		got[name]++
		if n != 1 {
			t.Errorf("consumer %s applied position %d %d times", name, pos, n)
		}
	}
	for _, name := range []string{"a", "b", "c"} {
		if got[name] != len(positions) {
			t.Errorf("consumer %s applied %d positions, want %d", name, got[name], len(positions))
		}
	}
}
