package conformance

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/lease"
	"github.com/tidemarkdb/tidemark/core/sqlerr"
	"github.com/tidemarkdb/tidemark/internal/testtime"
)

// The lease group proves the partition-lease statements and package
// core/lease on the real engine: claims, fencing under the claimed
// generation, the fence's lock holding off a takeover, one heartbeat
// statement per interval, graceful stop; and, with separate OS processes
// (lease_process_tests.go), takeover after kill -9, fencing of a paused
// owner and leases under skewed application clocks.
func leaseTests() []Test {
	return []Test{
		{"lease/claim_fence_stop", testLeaseClaimFenceStop},
		{"lease/fence_holds_takeover", testLeaseFenceHoldsTakeover},
		{"lease/heartbeat_one_statement", testLeaseHeartbeatOneStatement},
		{"lease/takeover_after_kill", testLeaseTakeoverAfterKill},
		{"lease/paused_owner_fenced", testLeasePausedOwnerFenced},
		{"lease/clock_skew", testLeaseClockSkew},
		{"lease/operator_status", testLeaseOperatorStatus},
	}
}

// leaseWritesTable records every fenced write: who wrote it under which
// generation, committed in the fenced transaction.
const leaseWritesTable = "TM_LEASE_WRITES"

func createLeaseWrites(t T, db *sql.DB) {
	t.Helper()
	if _, err := db.Exec(`CREATE TABLE ` + leaseWritesTable + ` (writer VARCHAR(64) NOT NULL, generation BIGINT NOT NULL)`); err != nil {
		t.Fatalf("creating %s: %v", leaseWritesTable, err)
	}
}

// fencedWrite runs Fence then one insert in a transaction of its own.
func fencedWrite(ctx context.Context, e *engine.Engine, c lease.Claim, writer string) error {
	tx, err := e.DB.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := lease.Fence(ctx, e, tx, c); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf(`INSERT INTO %s (writer, generation) VALUES ('%s', %d)`, leaseWritesTable, writer, c.Generation)); err != nil {
		return err
	}
	return tx.Commit()
}

func leaseWrites(t T, db *sql.DB, writer string) int {
	t.Helper()
	var n int
	if err := db.QueryRow(`SELECT COUNT(*) FROM ` + leaseWritesTable + ` WHERE writer = '` + writer + `'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func rowCount(t T, e *engine.Engine, placeholder string) int {
	t.Helper()
	var n int
	if err := e.DB.QueryRow(`SELECT COUNT(*) FROM ` + e.Names.Shared[placeholder]).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func quietLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(discard{}, nil))
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// testLeaseClaimFenceStop: one instance claims every partition at
// generation 1; Fence passes under the claim and fails (rolls back) under
// another generation or partition owner; bad input is refused before any
// SQL; a graceful stop deletes the instance and membership rows and frees
// every lease; a new claim raises the generation; DeleteConsumer removes
// the consumer's rows.
func testLeaseClaimFenceStop(t T, env *Env) {
	e := openEngine(t, env, defaultConfig(env))
	createLeaseWrites(t, env.DB)
	ctx := context.Background()
	co, err := lease.New(e, lease.Options{Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := co.Join(ctx, lease.ConsumerOptions{Type: strings.Repeat("x", 33), Name: "n"}); !errors.Is(err, lease.ErrInvalid) {
		t.Fatalf("a 33-byte consumer type: want ErrInvalid, got %v", err)
	}
	if n := rowCount(t, e, "partition_instances_table"); n != 0 {
		t.Fatalf("a refused join wrote %d instance rows", n)
	}
	m, err := co.Join(ctx, lease.ConsumerOptions{Type: "projection", Name: "claims", Partitions: 4})
	if err != nil {
		t.Fatal(err)
	}
	if err := co.Rebalance(ctx); err != nil {
		t.Fatal(err)
	}
	owned := m.Owned()
	if len(owned) != 4 {
		t.Fatalf("alone, the instance owns %v, want all 4 partitions", owned)
	}
	for p, g := range owned {
		if g != 1 {
			t.Errorf("partition %d claimed at generation %d, want 1", p, g)
		}
	}
	c, _ := m.Claim(2)
	if err := fencedWrite(ctx, e, c, "holder"); err != nil {
		t.Fatalf("a fenced write under the claim: %v", err)
	}
	stale := c
	stale.Generation++
	var lost *lease.LostError
	if err := fencedWrite(ctx, e, stale, "stale"); !errors.As(err, &lost) || !errors.Is(err, lease.ErrLeaseLost) {
		t.Fatalf("a fenced write under another generation: want *lease.LostError, got %v", err)
	}
	other := c
	other.InstanceID = "someone-else"
	if err := fencedWrite(ctx, e, other, "other"); !errors.Is(err, lease.ErrLeaseLost) {
		t.Fatalf("a fenced write by another instance: want ErrLeaseLost, got %v", err)
	}
	if got := leaseWrites(t, env.DB, "holder") + 10*leaseWrites(t, env.DB, "stale") + 100*leaseWrites(t, env.DB, "other"); got != 1 {
		t.Fatalf("fenced writes committed: holder, stale, other = %d (encoded), want only the holder's", got)
	}
	if err := co.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if n := rowCount(t, e, "partition_instances_table") + rowCount(t, e, "partition_members_table"); n != 0 {
		t.Fatalf("after a graceful stop %d instance and membership rows remain", n)
	}
	st, err := lease.Status(ctx, e, "projection", "claims")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range st {
		if l.Owner != "" {
			t.Errorf("after a graceful stop partition %d is still held by %s", l.Partition, l.Owner)
		}
	}
	if err := fencedWrite(ctx, e, c, "holder"); !errors.Is(err, lease.ErrLeaseLost) {
		t.Fatalf("a fenced write after the release: want ErrLeaseLost, got %v", err)
	}
	co2, _ := lease.New(e, lease.Options{Logger: quietLogger()})
	m2, err := co2.Join(ctx, lease.ConsumerOptions{Type: "projection", Name: "claims", Partitions: 4})
	if err != nil {
		t.Fatal(err)
	}
	if err := co2.Rebalance(ctx); err != nil {
		t.Fatal(err)
	}
	if g := m2.Owned()[2]; g != 2 {
		t.Errorf("claiming a released lease: generation %d, want 2 (raised)", g)
	}
	if err := lease.DeleteConsumer(ctx, e, e.DB, "projection", "claims"); err != nil {
		t.Fatal(err)
	}
	if n := rowCount(t, e, "partition_ownership_table") + rowCount(t, e, "partition_members_table"); n != 0 {
		t.Errorf("after DeleteConsumer %d ownership and membership rows remain", n)
	}
	_ = co2.Stop(ctx)
}

// testLeaseFenceHoldsTakeover: while an apply's transaction holds the
// fence of a lapsed owner's lease, the takeover statement waits for it (a
// session lock timeout shows the wait); once the apply commits, the
// takeover succeeds and raises the generation.
func testLeaseFenceHoldsTakeover(t T, env *Env) {
	e := openEngine(t, env, defaultConfig(env))
	createLeaseWrites(t, env.DB)
	ctx, cancel := testtime.Context(context.Background(), 2*time.Minute)
	defer cancel()
	co, err := lease.New(e, lease.Options{Logger: quietLogger(), HeartbeatInterval: 100 * time.Millisecond, LeaseDuration: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := co.Join(ctx, lease.ConsumerOptions{Type: "projection", Name: "held", Partitions: 1}); err != nil {
		t.Fatal(err)
	}
	if err := co.Rebalance(ctx); err != nil {
		t.Fatal(err)
	}
	// The claim as the database holds it (Member.Claim reports nothing
	// once the lease duration passed without a heartbeat, as it will here).
	st, err := lease.Status(ctx, e, "projection", "held")
	if err != nil || len(st) != 1 || st[0].Owner != co.InstanceID() {
		t.Fatalf("the only instance did not claim partition 0: %+v, %v", st, err)
	}
	c := lease.Claim{ConsumerType: "projection", ConsumerName: "held", Partition: 0, InstanceID: co.InstanceID(), Generation: st[0].Generation}
	waitLapsed(ctx, t, e, co.InstanceID())
	conn, err := e.DB.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	setting, _ := setSessionLockTimeout(ctx, env.Catalogue, conn)
	holder, err := e.DB.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Rollback()
	if err := lease.Fence(ctx, e, holder, c); err != nil {
		t.Fatalf("fencing a lapsed owner's lease nobody took over: %v", err)
	}
	takeover := func() (int64, error) {
		res, err := e.Exec(ctx, conn, dialect.LeaseTakeover, nil, map[string]any{"consumer_type": "projection", "consumer_name": "held",
			"partition_no": 0, "instance_id": "taker", "generation": c.Generation})
		if err != nil {
			return 0, err
		}
		return res.RowsAffected()
	}
	type outcome struct {
		n   int64
		err error
	}
	var waiting chan outcome
	if setting != "" {
		// The wait shows as a lock timeout of the session.
		if _, err := takeover(); err == nil || !errors.Is(err, sqlerr.ErrLockTimeout) && !errors.Is(err, sqlerr.ErrTransient) {
			t.Fatalf("the takeover of a fenced lease, after %s: want a lock timeout, got %v", setting, err)
		}
	} else {
		// No session lock timeout (HSQLDB, Firebird): the takeover runs
		// while the apply is held open; it must not complete before the
		// apply commits. The pause only gives a missing lock the chance to
		// show; nothing is measured.
		waiting = make(chan outcome, 1)
		go func() {
			n, err := takeover()
			waiting <- outcome{n, err}
		}()
		time.Sleep(500 * time.Millisecond)
		select {
		case o := <-waiting:
			if o.err == nil && o.n == 1 {
				t.Fatalf("the takeover completed while a fenced apply held the lease")
			}
			waiting <- o
		default:
		}
	}
	if _, err := holder.ExecContext(ctx, `INSERT INTO `+leaseWritesTable+` (writer, generation) VALUES ('held', 1)`); err != nil {
		t.Fatal(err)
	}
	if err := holder.Commit(); err != nil {
		t.Fatalf("the fenced apply could not commit: %v", err)
	}
	taken := false
	if waiting != nil {
		// The waiter takes the row once the apply committed, or (first
		// updater wins) fails with an update conflict: then take it again.
		o := <-waiting
		taken = o.err == nil && o.n == 1
	}
	if !taken {
		if n, err := takeover(); err != nil || n != 1 {
			t.Fatalf("the takeover after the apply committed: %d rows, %v", n, err)
		}
	}
	if err := fencedWrite(ctx, e, c, "late"); !errors.Is(err, lease.ErrLeaseLost) {
		t.Fatalf("a fenced write after the takeover: want ErrLeaseLost, got %v", err)
	}
	if leaseWrites(t, env.DB, "held") != 1 || leaseWrites(t, env.DB, "late") != 0 {
		t.Fatalf("want the in-flight apply committed and the late one rolled back")
	}
}

// waitLapsed waits until the instance row has lapsed on the database clock
// (a guard against hanging, not a timed assertion).
func waitLapsed(ctx context.Context, t T, e *engine.Engine, instance string) {
	t.Helper()
	for {
		live, err := liveInstances(ctx, e)
		if err != nil {
			t.Fatal(err)
		}
		if l, ok := live[instance]; ok && !l {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("instance %s never lapsed", instance)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// liveInstances maps every instance row's id to whether it is live on the
// database clock (the catalogue's Locks.Now).
func liveInstances(ctx context.Context, e *engine.Engine) (map[string]bool, error) {
	c, err := e.CompileText(`SELECT instance_id, CASE WHEN expires_at >= `+e.Cat.Locks.Now+` THEN 1 ELSE 0 END FROM ${partition_instances_table}`, nil)
	if err != nil {
		return nil, err
	}
	rows, err := e.DB.QueryContext(ctx, c.SQL)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var id string
		var live int
		if err := rows.Scan(&id, &live); err != nil {
			return nil, err
		}
		out[id] = live == 1
	}
	return out, rows.Err()
}

// testLeaseHeartbeatOneStatement: with three consumers and every partition
// held, each heartbeat is one statement on the database (counted by the
// driver).
func testLeaseHeartbeatOneStatement(t T, env *Env) {
	db, count := countingDB(t, env)
	ctx := context.Background()
	e, err := engine.Open(ctx, db, env.Catalogue, defaultConfig(env))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	co, err := lease.New(e, lease.Options{Logger: quietLogger(), HeartbeatInterval: time.Hour, LeaseDuration: 2 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	held := 0
	var ms []*lease.Member
	for _, name := range []string{"a", "b", "c"} {
		m, err := co.Join(ctx, lease.ConsumerOptions{Type: "projection", Name: "beat-" + name, Partitions: 8})
		if err != nil {
			t.Fatal(err)
		}
		ms = append(ms, m)
	}
	if err := co.Rebalance(ctx); err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		held += len(m.Owned())
	}
	if held != 24 {
		t.Fatalf("the instance holds %d leases, want 24", held)
	}
	const beats = 5
	before := count.Load()
	for range beats {
		if err := co.Heartbeat(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if got := count.Load() - before; got != beats {
		t.Errorf("%d heartbeats ran %d statements, want one each", beats, got)
	}
	if co.Heartbeats() != beats {
		t.Errorf("%d heartbeats refreshed the row, want %d", co.Heartbeats(), beats)
	}
	_ = co.Stop(ctx)
}
