package conformance

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"github.com/tidemarkdb/tidemark/core/consumer"
	"github.com/tidemarkdb/tidemark/core/eventstore"
)

// deliveryPollArgs are the arguments of the "delivery-poll" worker action.
type deliveryPollArgs struct {
	Name string `json:"name"`
	// Now is the application clock of the worker (Unix seconds).
	Now int64 `json:"now"`
	// Attempts is the retry budget.
	Attempts int `json:"attempts"`
}

func init() {
	RegisterWorkerAction("delivery-poll", runDeliveryPoll)
}

// runDeliveryPoll polls the consumer once, at the given clock, with a
// handler that always fails.
func runDeliveryPoll(ctx context.Context, db *sql.DB, job WorkerJob) (any, error) {
	e, args, err := openJob[deliveryPollArgs](ctx, db, job)
	if err != nil {
		return nil, err
	}
	defer e.Close()
	now := func() time.Time { return time.Unix(args.Now, 0).UTC() }
	tries := 0
	r, err := consumer.NewRunner(ctx, consumer.NewRegistry(e, now), consumer.Options{Type: "projection", Name: args.Name,
		Retry: exact(args.Attempts),
		Routes: []consumer.Route{consumer.On(consumer.EventStore(eventstore.New(e, nil), nil), func(context.Context, *sql.Tx, consumer.Msg[eventstore.Recorded]) error {
			tries++
			return errors.New("poison in the worker")
		})}})
	if err != nil {
		return nil, err
	}
	if _, err := r.Poll(ctx); err != nil {
		return nil, err
	}
	return tries, nil
}

// testDeliveryBudgetOtherProcess: a FAILED row's count and next_retry_at
// are what another OS process's runner of the same consumer goes on from.
func testDeliveryBudgetOtherProcess(t T, env *Env) {
	g := newDeliveryRig(t, env)
	a1 := g.add("A", `{}`)
	g.failing(a1, -1)
	r := g.runner("process", false, exact(3), "")
	id := r.Consumer().ID
	t0 := g.clock.Now()
	g.poll(r)
	g.wantRow(id, a1, consumer.StatusFailed, 1, t0.Add(time.Second))
	job := func(now time.Time) WorkerJob {
		raw, _ := json.Marshal(deliveryPollArgs{Name: "process", Now: now.Unix(), Attempts: 3})
		return WorkerJob{Action: "delivery-poll", Catalogue: env.Catalogue, Driver: env.Driver, DSN: env.DSN, Config: defaultConfig(env), Args: raw}
	}
	tries := func(res WorkerResult) int {
		if !res.OK {
			t.Fatalf("worker: %s %s", res.ErrorKind, res.Error)
		}
		var n int
		if err := json.Unmarshal(res.Data, &n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := tries(runWorkers(t, []WorkerJob{job(t0)})[0]); n != 0 {
		t.Errorf("the other process tried the message %d times before its next_retry_at, want 0", n)
	}
	if n := tries(runWorkers(t, []WorkerJob{job(t0.Add(time.Second))})[0]); n != 1 {
		t.Errorf("the other process tried the due message %d times, want 1", n)
	}
	g.wantRow(id, a1, consumer.StatusFailed, 2, t0.Add(3*time.Second))
	g.clock.Add(3 * time.Second)
	g.poll(r) // the third attempt, back in this process, spends the budget
	g.wantRow(id, a1, consumer.StatusHalted, 3, time.Time{})
}
