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
	"syscall"
	"time"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/lease"
	"github.com/tidemarkdb/tidemark/internal/testtime"
)

// leaseArgs are the arguments of the "lease-member" worker action: one
// instance running one consumer with a lease coordinator.
type leaseArgs struct {
	Consumer   string `json:"consumer"`
	Partitions int    `json:"partitions"`
	// Mode: "run" holds leases until told "stop"; "fence" also makes one
	// fenced write under partition 0's claim, then another after "go".
	Mode string `json:"mode"`
	// SkewSeconds shifts the instance's application clock.
	SkewSeconds int `json:"skew_seconds"`
}

// leaseTiming is the lease timing of the process tests: a lease outlives
// several heartbeats even on a loaded machine (2 cores, many processes).
var leaseTiming = lease.Options{HeartbeatInterval: 100 * time.Millisecond, RebalanceInterval: 250 * time.Millisecond, LeaseDuration: 1500 * time.Millisecond}

func init() {
	RegisterWorkerAction("lease-member", runLeaseMember)
}

// leaseResult is what a lease worker reports.
type leaseResult struct {
	Instance string `json:"instance"`
	// LateWrite is the error of the fenced write after "go" ("" = committed).
	LateWrite string `json:"late_write,omitempty"`
	LateLost  bool   `json:"late_lost,omitempty"`
}

// runLeaseMember prints "joined <instance>", then (fence mode) "owned
// <generation>" after a fenced write under partition 0's claim; it waits
// for one line on stdin ("stop", or "go" in fence mode: one more fenced
// write under the same claim) and stops gracefully.
func runLeaseMember(ctx context.Context, db *sql.DB, job WorkerJob) (any, error) {
	e, args, err := openJob[leaseArgs](ctx, db, job)
	if err != nil {
		return nil, err
	}
	defer e.Close()
	opts := leaseTiming
	opts.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	opts.Now = func() time.Time { return time.Now().Add(time.Duration(args.SkewSeconds) * time.Second) }
	co, err := lease.New(e, opts)
	if err != nil {
		return nil, err
	}
	m, err := co.Join(ctx, lease.ConsumerOptions{Type: "projection", Name: args.Consumer, Partitions: args.Partitions})
	if err != nil {
		return nil, err
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- co.Run(runCtx) }()
	fmt.Printf("joined %s\n", co.InstanceID())
	res := leaseResult{Instance: co.InstanceID()}
	stdin := bufio.NewReader(os.Stdin)
	if args.Mode == "fence" {
		claim, err := ownPartitionZero(ctx, m)
		if err != nil {
			stop()
			return nil, err
		}
		if err := fencedWrite(ctx, e, claim, "paused"); err != nil {
			stop()
			return nil, fmt.Errorf("the fenced write under a held lease: %w", err)
		}
		fmt.Printf("owned %d\n", claim.Generation)
		if _, err := stdin.ReadString('\n'); err != nil {
			stop()
			return nil, err
		}
		if err := fencedWrite(ctx, e, claim, "paused"); err != nil {
			res.LateWrite, res.LateLost = err.Error(), errors.Is(err, lease.ErrLeaseLost)
		}
	} else if _, err := stdin.ReadString('\n'); err != nil {
		stop()
		return nil, err
	}
	stop()
	return res, <-done
}

// ownPartitionZero waits until the instance holds partition 0.
func ownPartitionZero(ctx context.Context, m *lease.Member) (lease.Claim, error) {
	for {
		if c, ok := m.Claim(0); ok {
			return c, nil
		}
		select {
		case <-ctx.Done():
			return lease.Claim{}, ctx.Err()
		case <-m.Changed():
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// leaseJob is a lease-member job on env's database.
func leaseJob(env *Env, args leaseArgs) WorkerJob {
	raw, _ := json.Marshal(args)
	return WorkerJob{Action: "lease-member", Catalogue: env.Catalogue, Driver: env.Driver, DSN: env.DSN, Config: defaultConfig(env), Args: raw}
}

// waitLeases polls the consumer's leases until cond holds (a guard
// against hanging, not a timed assertion).
func waitLeases(ctx context.Context, t T, e *engine.Engine, consumer, what string, cond func([]lease.PartitionLease) bool) []lease.PartitionLease {
	t.Helper()
	var last []lease.PartitionLease
	for {
		st, err := lease.Status(ctx, e, "projection", consumer)
		if err == nil {
			last = st
			if cond(st) {
				return st
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("waiting for %s: never reached (last leases %+v, last error %v)", what, last, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// spreadOver reports whether all partitions are held by live owners, all
// of them in owners, none above the bound.
func spreadOver(st []lease.PartitionLease, partitions int, owners []string) bool {
	if len(st) != partitions {
		return false
	}
	ok := map[string]bool{}
	for _, o := range owners {
		ok[o] = true
	}
	load := map[string]int{}
	for _, l := range st {
		if !l.Live || !ok[l.Owner] {
			return false
		}
		load[l.Owner]++
	}
	for _, n := range load {
		if n > lease.Bound(partitions, len(owners)) {
			return false
		}
	}
	return len(load) == len(owners)
}

// testLeaseTakeoverAfterKill: three instances (OS processes) spread 8
// partitions (3/3/2); kill -9 one: the two others take its partitions
// over (its generations raised, 4/4), purge its rows, and on a graceful
// stop release everything and delete their rows.
func testLeaseTakeoverAfterKill(t T, env *Env) {
	e := openEngine(t, env, defaultConfig(env))
	ctx, cancel := testtime.Context(context.Background(), 3*time.Minute)
	defer cancel()
	const parts = 8
	var ws []*liveWorker
	var ids []string
	for range 3 {
		w := startLive(ctx, t, leaseJob(env, leaseArgs{Consumer: "killed", Partitions: parts, Mode: "run"}))
		ws = append(ws, w)
		ids = append(ids, strings.TrimPrefix(w.expect(ctx, t, "joined "), "joined "))
	}
	before := waitLeases(ctx, t, e, "killed", "8 partitions over 3 instances", func(st []lease.PartitionLease) bool { return spreadOver(st, parts, ids) })
	victim := ids[2]
	ws[2].kill(t)
	after := waitLeases(ctx, t, e, "killed", "the killed instance's partitions taken over", func(st []lease.PartitionLease) bool { return spreadOver(st, parts, ids[:2]) })
	for i, l := range before {
		if l.Owner == victim && after[i].Generation <= l.Generation {
			t.Errorf("partition %d taken over from the killed instance at generation %d, was %d: not raised", l.Partition, after[i].Generation, l.Generation)
		}
	}
	waitRows(ctx, t, e, "the killed instance's rows purged", func() bool {
		live, err := liveInstances(ctx, e)
		return err == nil && len(live) == 2 && !live[victim] && rowCount(t, e, "partition_members_table") == 2
	})
	for _, w := range ws[:2] {
		w.send(t, "stop")
	}
	for _, w := range ws[:2] {
		if r := w.result(ctx, t); !r.OK {
			t.Fatalf("a surviving instance failed: %s %s", r.ErrorKind, r.Error)
		}
	}
	if n := rowCount(t, e, "partition_instances_table") + rowCount(t, e, "partition_members_table"); n != 0 {
		t.Errorf("after both graceful stops %d instance and membership rows remain", n)
	}
	st, _ := lease.Status(ctx, e, "projection", "killed")
	for _, l := range st {
		if l.Owner != "" {
			t.Errorf("after both graceful stops partition %d is held by %s", l.Partition, l.Owner)
		}
	}
}

func waitRows(ctx context.Context, t T, e *engine.Engine, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("waiting for %s: never reached", what)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// testLeasePausedOwnerFenced: an instance (an OS process) holds partition
// 0 and commits a fenced write; it is paused with SIGSTOP, lapses, and a
// second instance takes the lease over (generation raised). Resumed, the
// paused instance's next write under its old claim is fenced: it rolls
// back (ErrLeaseLost) and nothing of it is committed.
func testLeasePausedOwnerFenced(t T, env *Env) {
	e := openEngine(t, env, defaultConfig(env))
	createLeaseWrites(t, env.DB)
	ctx, cancel := testtime.Context(context.Background(), 3*time.Minute)
	defer cancel()
	paused := startLive(ctx, t, leaseJob(env, leaseArgs{Consumer: "paused", Partitions: 2, Mode: "fence"}))
	pausedID := strings.TrimPrefix(paused.expect(ctx, t, "joined "), "joined ")
	var gen int64
	fmt.Sscanf(paused.expect(ctx, t, "owned "), "owned %d", &gen)
	if n := leaseWrites(t, env.DB, "paused"); n != 1 {
		t.Fatalf("the owner's fenced write under a held lease: %d rows, want 1", n)
	}
	pauseIdle(ctx, t, env, paused)
	taker := startLive(ctx, t, leaseJob(env, leaseArgs{Consumer: "paused", Partitions: 2, Mode: "run"}))
	takerID := strings.TrimPrefix(taker.expect(ctx, t, "joined "), "joined ")
	waitLeases(ctx, t, e, "paused", "the paused owner's lease taken over", func(st []lease.PartitionLease) bool {
		return len(st) == 2 && st[0].Owner == takerID && st[0].Live && st[0].Generation > gen
	})
	paused.signal(t, syscall.SIGCONT)
	paused.send(t, "go")
	r := paused.result(ctx, t)
	if !r.OK {
		t.Fatalf("the paused instance failed: %s %s", r.ErrorKind, r.Error)
	}
	var res leaseResult
	_ = json.Unmarshal(r.Data, &res)
	if res.LateWrite == "" || !res.LateLost {
		t.Errorf("the resumed owner's write under generation %d after the takeover: want ErrLeaseLost, got %q", gen, res.LateWrite)
	}
	if n := leaseWrites(t, env.DB, "paused"); n != 1 {
		t.Errorf("the resumed owner (%s) committed %d fenced writes, want only the one before the takeover", pausedID, n)
	}
	taker.send(t, "stop")
	if r := taker.result(ctx, t); !r.OK {
		t.Fatalf("the taking instance failed: %s %s", r.ErrorKind, r.Error)
	}
}

// pauseIdle stops the worker with SIGSTOP at a moment it holds no write
// lock. Where the engine serialises writers inside the process (SQLite), a
// process stopped in the middle of its heartbeat would keep the database's
// write lock and nobody could take its leases over: probe with a write
// transaction under a short lock timeout, and resume and stop it again
// while the probe fails.
func pauseIdle(ctx context.Context, t T, env *Env, lw *liveWorker) {
	t.Helper()
	lw.signal(t, syscall.SIGSTOP)
	if !env.Catalogue.Locks.SerializesWriters {
		return
	}
	for range 50 {
		if writable(ctx, env) {
			return
		}
		lw.signal(t, syscall.SIGCONT)
		time.Sleep(20 * time.Millisecond)
		lw.signal(t, syscall.SIGSTOP)
	}
	t.Fatalf("the paused worker held the write lock at 50 stops")
}

// writable reports whether a write transaction begins within a short lock
// timeout (the connection's default is restored by closing it).
func writable(ctx context.Context, env *Env) bool {
	db := env.OpenDB()
	db.SetMaxOpenConns(1)
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		return false
	}
	defer conn.Close()
	setSessionLockTimeout(ctx, env.Catalogue, conn)
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return false
	}
	return tx.Rollback() == nil
}

// testLeaseClockSkew: two instances whose application clocks are ten
// minutes apart (one 5 min ahead, one 5 min behind) spread 8 partitions
// 4/4 and keep them: no generation moves over several rebalance rounds.
// Every expiry is on the database clock; a lease computed on either
// application clock would lapse at once or never.
func testLeaseClockSkew(t T, env *Env) {
	e := openEngine(t, env, defaultConfig(env))
	ctx, cancel := testtime.Context(context.Background(), 3*time.Minute)
	defer cancel()
	const parts = 8
	var ws []*liveWorker
	var ids []string
	for _, skew := range []int{300, -300} {
		w := startLive(ctx, t, leaseJob(env, leaseArgs{Consumer: "skewed", Partitions: parts, Mode: "run", SkewSeconds: skew}))
		ws = append(ws, w)
		ids = append(ids, strings.TrimPrefix(w.expect(ctx, t, "joined "), "joined "))
	}
	spread := func(st []lease.PartitionLease) bool { return spreadOver(st, parts, ids) }
	first := waitLeases(ctx, t, e, "skewed", "8 partitions over 2 skewed instances", spread)
	// Several heartbeats and rebalances (leaseTiming: 100 and 250 ms) pass
	// while the leases are watched: each instance's heartbeat count is not
	// visible here, so the database clock is: wait until it moved past two
	// lease durations.
	start := dbNow(ctx, t, e)
	for dbNow(ctx, t, e).Sub(start) < 2*leaseTiming.LeaseDuration {
		st := waitLeases(ctx, t, e, "skewed", "the spread kept", func([]lease.PartitionLease) bool { return true })
		if !spread(st) {
			t.Fatalf("the leases of skewed instances moved: %+v", st)
		}
		for i, l := range st {
			if l.Generation != first[i].Generation || l.Owner != first[i].Owner {
				t.Fatalf("partition %d moved from %s@%d to %s@%d between skewed instances", l.Partition, first[i].Owner, first[i].Generation, l.Owner, l.Generation)
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, w := range ws {
		w.send(t, "stop")
	}
	for _, w := range ws {
		if r := w.result(ctx, t); !r.OK {
			t.Fatalf("a skewed instance failed: %s %s", r.ErrorKind, r.Error)
		}
	}
}

// dbNow is the database clock.
func dbNow(ctx context.Context, t T, e *engine.Engine) time.Time {
	t.Helper()
	var now engine.UTCTime
	if err := e.QueryRow(ctx, e.DB, dialect.DatabaseNow, nil, nil).Scan(&now); err != nil {
		t.Fatal(err)
	}
	return time.Time(now)
}
