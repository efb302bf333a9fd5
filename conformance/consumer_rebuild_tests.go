package conformance

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/tidemarkdb/tidemark/core/consumer"
	"github.com/tidemarkdb/tidemark/core/eventstore"
)

// A rebuild fences a poll in flight (separate OS processes): a poll begun
// before BeginRebuild, its handler held inside its first apply while the
// test begins the rebuild and empties the read model, commits nothing into
// the emptied read model, moves no checkpoint while the consumer is
// REBUILDING and calls no handler after the rebuild began; after
// CompleteRebuild every position is applied exactly once.

// straddleArgs are the arguments of the "consumer-rebuild-straddle" worker.
type straddleArgs struct {
	Consumer      string `json:"consumer"`
	Transactional bool   `json:"transactional"`
}

func init() {
	RegisterWorkerAction("consumer-rebuild-straddle", runRebuildStraddle)
}

// runRebuildStraddle runs one poll of the consumer with one worker; its
// first handler call prints "in-handler <position>" and waits for
// "release" on stdin before it writes. It prints "polled <handler calls>
// <poll error>" when the poll returns.
func runRebuildStraddle(ctx context.Context, db *sql.DB, job WorkerJob) (any, error) {
	e, args, err := openJob[straddleArgs](ctx, db, job)
	if err != nil {
		return nil, err
	}
	defer e.Close()
	release := make(chan struct{})
	go func() {
		in := bufio.NewScanner(os.Stdin)
		for in.Scan() {
			if in.Text() == "release" {
				close(release)
				return
			}
		}
	}()
	var calls atomic.Int64
	h := func(ctx context.Context, tx *sql.Tx, m consumer.Msg[eventstore.Recorded]) error {
		if calls.Add(1) == 1 {
			fmt.Printf("in-handler %d\n", m.Position)
			select {
			case <-release:
			case <-time.After(3 * time.Minute): // hang guard only
			}
		}
		q := fmt.Sprintf(`INSERT INTO %s (pos) VALUES (%d)`, appliedTable, m.Position)
		if tx != nil {
			_, err := tx.ExecContext(ctx, q)
			return err
		}
		_, err := db.ExecContext(ctx, q)
		return err
	}
	r, err := consumer.NewRunner(ctx, consumer.NewRegistry(e, nil), consumer.Options{Type: "projection", Name: args.Consumer,
		Transactional: args.Transactional, Workers: 1, Routes: []consumer.Route{consumer.On(consumer.EventStore(eventstore.New(e, nil), nil), h)},
	})
	if err != nil {
		return nil, err
	}
	_, perr := r.Poll(ctx)
	fmt.Printf("polled %d %v\n", calls.Load(), perr)
	return nil, nil
}

func testConsumerRebuildFencesPollTx(t T, env *Env)    { testConsumerRebuildFencesPoll(t, env, true) }
func testConsumerRebuildFencesPollNonTx(t T, env *Env) { testConsumerRebuildFencesPoll(t, env, false) }

// testConsumerRebuildFencesPoll follows the documented procedure with a
// poll straddling BeginRebuild in another process. A Transactional
// handler's read model is emptied right after BeginRebuild, while the poll
// still runs: its applies must roll back. A non-transactional handler
// cannot be fenced once it runs, so the read model is emptied once the
// poll's handler call in flight returned: no further call may start.
// Where the engine serialises writers, a Transactional apply holds the one
// write lock from its first statement, so BeginRebuild cannot commit while
// it runs: the apply is released first and nothing straddles there.
func testConsumerRebuildFencesPoll(t T, env *Env, transactional bool) {
	s, e := openStore(t, env)
	createApplied(t, env)
	var keys []string
	for i := range 12 {
		keys = append(keys, fmt.Sprintf("rb-%d", i))
	}
	positions := appendSpread(t, s, e, keys, 36)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	name := "rebuild-straddle"
	raw := fmt.Sprintf(`{"consumer":%q,"transactional":%v}`, name, transactional)
	w := startLive(ctx, t, WorkerJob{Action: "consumer-rebuild-straddle", Catalogue: env.Catalogue, Driver: env.Driver, DSN: env.DSN,
		Config: defaultConfig(env), Args: []byte(raw)})
	w.expect(ctx, t, "in-handler ")
	reg := consumer.NewRegistry(e, nil)
	c, err := reg.Lookup(ctx, "projection", name)
	if err != nil {
		t.Fatal(err)
	}
	straddles := !(transactional && env.Catalogue.Locks.SerializesWriters)
	var polled string
	if !straddles {
		w.send(t, "release")
		polled = w.expect(ctx, t, "polled ")
	}
	epoch, err := reg.BeginRebuild(ctx, c.ID)
	if err != nil {
		t.Fatalf("begin rebuild: %v", err)
	}
	emptyReadModel := func() {
		if _, err := env.DB.ExecContext(ctx, `DELETE FROM `+appliedTable); err != nil {
			t.Fatalf("emptying the read model: %v", err)
		}
	}
	if transactional {
		emptyReadModel()
	}
	if straddles {
		w.send(t, "release")
		polled = w.expect(ctx, t, "polled ")
	}
	if !transactional {
		emptyReadModel()
	}
	if f := strings.Fields(polled); straddles && (len(f) < 2 || f[1] != "1") {
		t.Errorf("the straddling poll called its handler %s times, want once (the call in flight): %q", f[1], polled)
	}
	if n := len(appliedCounts(t, env)); n != 0 {
		t.Errorf("%d applies of the poll begun before the rebuild are in the emptied read model, want 0", n)
	}
	cps, err := reg.Checkpoints(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, cp := range cps {
		if cp.Recorded || cp.Epoch != epoch {
			t.Errorf("checkpoint %s/%d moved while REBUILDING: position %d (recorded %v) epoch %d, want none under epoch %d",
				cp.Source, cp.Partition, cp.Position, cp.Recorded, cp.Epoch, epoch)
		}
	}
	if err := reg.CompleteRebuild(ctx, c.ID, epoch); err != nil {
		t.Fatalf("complete rebuild: %v", err)
	}
	if r := w.result(ctx, t); !r.OK {
		t.Fatalf("the straddling worker failed: %s %s", r.ErrorKind, r.Error)
	}
	r, err := consumer.NewRunner(ctx, reg, consumer.Options{Type: "projection", Name: name, Transactional: transactional,

		Routes: []consumer.Route{consumer.On(consumer.EventStore(s, nil), func(ctx context.Context, tx *sql.Tx, m consumer.Msg[eventstore.Recorded]) error {
			q := `INSERT INTO ` + appliedTable + ` (pos) VALUES (` + strconv.FormatInt(m.Position, 10) + `)`
			if tx != nil {
				_, err := tx.ExecContext(ctx, q)
				return err
			}
			_, err := env.DB.ExecContext(ctx, q)
			return err
		})}})
	if err != nil {
		t.Fatal(err)
	}
	pollUntil(t, r, func() bool { return len(appliedCounts(t, env)) == len(positions) })
	counts := appliedCounts(t, env)
	for _, p := range positions {
		if counts[p] != 1 {
			t.Errorf("position %d applied %d times into the rebuilt read model, want once", p, counts[p])
		}
	}
}

// testConsumerRebuildDeletesDelivery: a rebuild deletes the consumer's
// undelivered rows and skips (the spec's "a rebuild deletes the
// consumer's rows"), in BeginRebuild's transaction: a Transactional retry
// of an undelivered row deletes its row in its own transaction, so one
// straddling BeginRebuild commits before it or rolls back. After the
// rebuild the message that had failed is applied like every other.
func testConsumerRebuildDeletesDelivery(t T, env *Env) {
	s, e := openStore(t, env)
	createApplied(t, env)
	ctx := context.Background()
	positions := appendSpread(t, s, e, []string{"dl-1", "dl-2"}, 4)
	failing := positions[1]
	fail := true
	reg := consumer.NewRegistry(e, nil)
	r, err := consumer.NewRunner(ctx, reg, consumer.Options{Type: "projection", Name: "rebuild-rows", Transactional: true,
		Retry: consumer.RetryPolicy{MaxAttempts: 1}, OnError: consumer.PolicyDeadLetter,

		Routes: []consumer.Route{consumer.On(consumer.EventStore(s, nil), func(ctx context.Context, tx *sql.Tx, m consumer.Msg[eventstore.Recorded]) error {
			if fail && m.Position == failing {
				return fmt.Errorf("refused")
			}
			return insertApplied(ctx, tx, m.Position)
		})}})
	if err != nil {
		t.Fatal(err)
	}
	pollUntil(t, r, func() bool { return len(appliedCounts(t, env)) == len(positions)-1 })
	id := r.Consumer().ID
	if err := reg.RecordSkip(ctx, id, consumer.Skip{Source: "event-store", Position: positions[3], EveryKey: true}); err != nil {
		t.Fatal(err)
	}
	rows, err := reg.UndeliveredRows(ctx, id)
	if err != nil || len(rows) != 1 {
		t.Fatalf("before the rebuild: %d undelivered rows (%v), want 1", len(rows), err)
	}
	epoch, err := reg.BeginRebuild(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	rows, err = reg.UndeliveredRows(ctx, id)
	if err != nil || len(rows) != 0 {
		t.Errorf("after BeginRebuild: %d undelivered rows (%v), want 0", len(rows), err)
	}
	skips, err := reg.Skips(ctx, id, "event-store", 0)
	if err != nil || len(skips) != 0 {
		t.Errorf("after BeginRebuild: %d skips (%v), want 0", len(skips), err)
	}
	if _, err := env.DB.ExecContext(ctx, `DELETE FROM `+appliedTable); err != nil {
		t.Fatal(err)
	}
	if err := reg.CompleteRebuild(ctx, id, epoch); err != nil {
		t.Fatal(err)
	}
	fail = false
	pollUntil(t, r, func() bool { return len(appliedCounts(t, env)) == len(positions) })
	for p, n := range appliedCounts(t, env) {
		if n != 1 {
			t.Errorf("position %d applied %d times after the rebuild, want once", p, n)
		}
	}
}
