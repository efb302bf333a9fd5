package conformance

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/tidemarkdb/tidemark/core/consumer"
	"github.com/tidemarkdb/tidemark/core/eventstore"
	"github.com/tidemarkdb/tidemark/core/lease"
	"github.com/tidemarkdb/tidemark/core/projection"
	"github.com/tidemarkdb/tidemark/internal/testtime"
)

func init() {
	RegisterWorkerAction("projection-leased", runLeasedProjection)
}

// runLeasedProjection runs the account projection (args: the fixture
// decimal's digits) under a lease coordinator, single-owner; it prints
// "joined <instance>" and runs until "stop".
func runLeasedProjection(ctx context.Context, db *sql.DB, job WorkerJob) (any, error) {
	e, args, err := openJob[memNodeArgs](ctx, db, job)
	if err != nil {
		return nil, err
	}
	defer e.Close()
	co, err := lease.New(e, leaseTiming)
	if err != nil {
		return nil, err
	}
	st, err := projection.Open(ctx, e, accountProjectionDigits(args.Precision, args.Scale))
	if err != nil {
		return nil, err
	}
	opts, err := st.Options(consumer.EventStore(eventstore.New(e, nil), nil))
	if err != nil {
		return nil, err
	}
	opts = projection.WithLeases(opts, co)
	opts.PollInterval = 20 * time.Millisecond
	r, err := consumer.NewRunner(ctx, consumer.NewRegistry(e, nil), opts)
	if err != nil {
		return nil, err
	}
	rctx, stop := context.WithCancel(ctx)
	defer stop()
	coDone, runDone := make(chan error, 1), make(chan error, 1)
	go func() { coDone <- co.Run(rctx) }()
	go func() { runDone <- r.Run(rctx) }()
	fmt.Printf("joined %s\n", co.InstanceID())
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() && in.Text() != "stop" {
	}
	stop()
	if err := <-runDone; err != nil && !errors.Is(err, context.Canceled) {
		return nil, err
	}
	<-coDone
	return nil, nil
}

// ownedBy tells whether every partition lease is live and held by owner
// (any one instance when owner is "").
func ownedBy(st []lease.PartitionLease, owner string) bool {
	if len(st) == 0 {
		return false
	}
	for _, l := range st {
		if !l.Live || l.Owner == "" || (owner != "" && l.Owner != owner) || l.Owner != st[0].Owner {
			return false
		}
	}
	return true
}

// Two instances (OS processes) run the projection with WithLeases: one
// holds every partition; killed (-9), the other takes over once its lease
// lapses, and every read model ends with each event applied once (a
// deposit counts its applies).
func testProjectionSingleOwnerTakeover(t T, env *Env) {
	r := newProjRig(t, env)
	ctx, cancel := testtime.Context(context.Background(), 3*time.Minute)
	defer cancel()
	dec := env.Features.fixtureQueryTable().Fields[1]
	raw, _ := json.Marshal(memNodeArgs{Precision: dec.Precision, Scale: dec.Scale})
	job := WorkerJob{Action: "projection-leased", Catalogue: env.Catalogue, Driver: env.Driver, DSN: env.DSN, Config: defaultConfig(env), Args: raw}
	ws := map[string]*liveWorker{}
	for range 2 {
		w := startLive(ctx, t, job)
		ws[strings.TrimPrefix(w.expect(ctx, t, "joined "), "joined ")] = w
	}
	const models, rounds = 3, 8
	deposit := func() {
		for m := range models {
			r.append(t, "bank.Account", fmt.Sprintf("s-%d", m), projDeposited{"1"})
		}
	}
	for range rounds / 2 {
		deposit()
	}
	before := waitLeases(ctx, t, r.e, "account-summary", "one instance holding every partition", func(st []lease.PartitionLease) bool { return ownedBy(st, "") })
	owner := before[0].Owner
	for m := range models {
		r.waitDeposits(t, fmt.Sprintf("s-%d", m), rounds/2)
	}
	ws[owner].kill(t)
	delete(ws, owner)
	for range rounds - rounds/2 {
		deposit()
	}
	var other string
	for id := range ws {
		other = id
	}
	waitLeases(ctx, t, r.e, "account-summary", "the other instance holding every partition", func(st []lease.PartitionLease) bool {
		return len(st) == len(before) && ownedBy(st, other)
	})
	for m := range models {
		if got := r.waitDeposits(t, fmt.Sprintf("s-%d", m), rounds); got.Balance != fmt.Sprintf("%d.00", rounds) {
			t.Errorf("s-%d: %+v; want %d deposits of 1, each applied once", m, got, rounds)
		}
	}
	ws[other].send(t, "stop")
	if res := ws[other].result(ctx, t); !res.OK {
		t.Fatalf("the surviving instance failed: %s %s", res.ErrorKind, res.Error)
	}
}
