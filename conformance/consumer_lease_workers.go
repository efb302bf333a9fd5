package conformance

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/tidemarkdb/tidemark/core/consumer"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/eventstore"
	"github.com/tidemarkdb/tidemark/core/lease"
	"github.com/tidemarkdb/tidemark/internal/testtime"
)

// leaseAppliedTable records every apply of the leased consumer, written by
// the handler in the apply's transaction: the position, its partition, the
// instance and the lease generation it was applied under.
const leaseAppliedTable = "TM_LEASE_APPLIED"

// leasedArgs are the arguments of the "consumer-leased" worker action: one
// instance (OS process) running the Transactional consumer "projection/
// <Consumer>" with partition leases on.
type leasedArgs struct {
	Consumer string `json:"consumer"`
	// KillAfter > 0: the instance kills itself (SIGKILL) inside its
	// KillAfter-th apply, after its insert, once the others have committed
	// OthersFirst rows (at once where its open transaction holds them off:
	// othersCanCommit).
	KillAfter   int `json:"kill_after"`
	OthersFirst int `json:"others_first"`
	// PauseKey: the first apply of this aggregate id prints "in-apply
	// <position> <generation>" after its insert and waits for "release".
	PauseKey string `json:"pause_key"`
	// JoinOnGo: the runner is created (the consumer joins the coordinator)
	// only on "go"; "joined" is printed once the engine is open. An
	// instance started while another holds a transaction open has opened
	// its engine (whose schema DDL waits for open transactions on some
	// engines, HSQLDB) before that.
	JoinOnGo bool `json:"join_on_go"`
	// NonTransactional runs the handler outside the apply's transaction
	// (its insert on its own); ApplyMillis slows every apply down by that.
	NonTransactional bool `json:"non_transactional"`
	ApplyMillis      int  `json:"apply_millis"`
	// LeaseMillis > 0 replaces leaseTiming's LeaseDuration: a test where
	// no instance dies gives leases a lifetime no starved heartbeat
	// outlasts (redelivery after an expired lease is allowed).
	LeaseMillis int `json:"lease_millis"`
}

// leasedResult is what a leased worker reports.
type leasedResult struct {
	Instance string `json:"instance"`
	// Lost counts the applies and saves fenced off (ErrLeaseLost).
	Lost int64 `json:"lost"`
}

func init() {
	RegisterWorkerAction("consumer-leased", runLeasedConsumer)
}

// countingHandler counts the runner's "lease lost" records.
type countingHandler struct {
	slog.Handler
	lost *atomic.Int64
}

func (h countingHandler) Handle(ctx context.Context, r slog.Record) error {
	if strings.Contains(r.Message, "partition lease lost") {
		h.lost.Add(1)
	}
	return h.Handler.Handle(ctx, r)
}

func (h countingHandler) WithAttrs(a []slog.Attr) slog.Handler {
	return countingHandler{h.Handler.WithAttrs(a), h.lost}
}

func (h countingHandler) WithGroup(g string) slog.Handler {
	return countingHandler{h.Handler.WithGroup(g), h.lost}
}

// runLeasedConsumer prints "joined <instance>" once its runner has joined
// the coordinator (which runs from then on); it starts the runner on "go",
// releases a paused apply on "release" and stops gracefully on "stop".
func runLeasedConsumer(ctx context.Context, db *sql.DB, job WorkerJob) (any, error) {
	e, args, err := openJob[leasedArgs](ctx, db, job)
	if err != nil {
		return nil, err
	}
	defer e.Close()
	var lost atomic.Int64
	logger := slog.New(countingHandler{slog.NewTextHandler(os.Stderr, nil), &lost})
	opts := leaseTiming
	opts.Logger = logger
	if args.LeaseMillis > 0 {
		opts.LeaseDuration = time.Duration(args.LeaseMillis) * time.Millisecond
	}
	co, err := lease.New(e, opts)
	if err != nil {
		return nil, err
	}
	release := make(chan struct{})
	newRunner := func() (*consumer.Runner, error) {
		return consumer.NewRunner(ctx, consumer.NewRegistry(e, nil), consumer.Options{Type: "projection", Name: args.Consumer,
			Transactional: !args.NonTransactional, PageSize: 16, Logger: logger, Leases: co,

			Routes: []consumer.Route{consumer.On(consumer.EventStore(eventstore.New(e, nil), nil), leasedHandler(db, e, co.InstanceID(), args, release))}})
	}
	var r *consumer.Runner
	if !args.JoinOnGo {
		if r, err = newRunner(); err != nil {
			return nil, err
		}
	}
	coCtx, stopCo := context.WithCancel(ctx)
	coDone := make(chan error, 1)
	go func() { coDone <- co.Run(coCtx) }()
	defer func() { stopCo(); <-coDone }()
	fmt.Printf("joined %s\n", co.InstanceID())
	lines := make(chan string)
	go func() {
		defer close(lines)
		in := bufio.NewScanner(os.Stdin)
		for in.Scan() {
			lines <- in.Text()
		}
	}()
	if l := <-lines; l != "go" {
		return nil, fmt.Errorf("want go, read %q", l)
	}
	if r == nil {
		if r, err = newRunner(); err != nil {
			return nil, err
		}
	}
	runCtx, stopRun := context.WithCancel(ctx)
	runDone := make(chan error, 1)
	go func() { runDone <- r.Run(runCtx) }()
	for l := range lines {
		if l == "release" {
			close(release)
		}
		if l == "stop" {
			break
		}
	}
	stopRun()
	if err := <-runDone; err != nil && !errors.Is(err, context.Canceled) {
		return nil, err
	}
	return leasedResult{Instance: co.InstanceID(), Lost: lost.Load()}, nil
}

// leasedHandler inserts a row per apply in the apply's transaction, then
// kills or pauses the process when args say so.
func leasedHandler(db *sql.DB, e *engine.Engine, instance string, args leasedArgs, release <-chan struct{}) consumer.Handler[eventstore.Recorded] {
	var invoked atomic.Int64
	var paused atomic.Bool
	return func(ctx context.Context, tx *sql.Tx, m consumer.Msg[eventstore.Recorded]) error {
		if args.ApplyMillis > 0 {
			time.Sleep(time.Duration(args.ApplyMillis) * time.Millisecond)
		}
		var q interface {
			ExecContext(context.Context, string, ...any) (sql.Result, error)
		} = db
		if tx != nil {
			q = tx
		}
		if _, err := q.ExecContext(ctx, fmt.Sprintf(`INSERT INTO %s (pos, pno, instance_id, generation) VALUES (%d, %d, '%s', %d)`,
			leaseAppliedTable, m.Position, m.Partition, instance, m.Generation)); err != nil {
			return err
		}
		if n := invoked.Add(1); args.KillAfter > 0 && n == int64(args.KillAfter) {
			killLeasedMidApply(ctx, db, e, instance, args.OthersFirst)
		}
		if args.PauseKey != "" && strings.HasSuffix(m.Key, "/"+args.PauseKey) && paused.CompareAndSwap(false, true) {
			fmt.Printf("in-apply %d %d\n", m.Position, m.Generation)
			select {
			case <-release:
			case <-testtime.After(3 * time.Minute): // hang guard only
			}
		}
		return nil
	}
}

// killLeasedMidApply waits until the other instances have committed
// othersFirst rows (bounded: 20 s) and kills this process, its apply's
// transaction open.
func killLeasedMidApply(ctx context.Context, db *sql.DB, e *engine.Engine, instance string, othersFirst int) {
	if othersCanCommit(e) {
		deadline := testtime.Deadline(20 * time.Second)
		for time.Now().Before(deadline) {
			var n int
			err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM `+leaseAppliedTable+` WHERE instance_id <> '`+instance+`'`).Scan(&n)
			if err == nil && n >= othersFirst {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL) // kill -9, mid-apply
	select {}
}

// leasedJob is a consumer-leased job on env's database with cfg.
func leasedJob(env *Env, cfg engine.Config, args leasedArgs) WorkerJob {
	raw, _ := json.Marshal(args)
	return WorkerJob{Action: "consumer-leased", Catalogue: env.Catalogue, Driver: env.Driver, DSN: env.DSN, Config: cfg, Args: raw}
}
