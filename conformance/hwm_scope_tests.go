package conformance

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"time"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/eventstore"
	"github.com/tidemarkdb/tidemark/core/hwm"
	"github.com/tidemarkdb/tidemark/internal/testtime"
)

// failureRecorder is a metrics hook that keeps every Failed report.
type failureRecorder struct {
	mu     sync.Mutex
	failed []error
}

func (f *failureRecorder) Observe(string, int64, int64) {}

func (f *failureRecorder) Failed(_ string, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failed = append(f.failed, err)
}

func (f *failureRecorder) failures() []error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]error(nil), f.failed...)
}

// stopRig starts and stops advancers for testStopIsNotFailure. Each
// advancer runs on a pool of its own, closed after its stop: a driver may
// still deliver a cancellation to the connection it used (the JDBC
// bridge's is asynchronous), which must not reach the next statement of
// the test or of the next advancer.
type stopRig struct {
	t   T
	env *Env
	ctx context.Context
	rec hwm.Metrics
}

// open makes an advancer on its own pool (before any row is held: opening
// an engine writes its seeds) and returns it with the pool's closer.
func (r *stopRig) open(owner string) (*hwm.Advancer, func()) {
	db := r.env.OpenDB()
	ae, err := engine.Open(r.ctx, db, r.env.Catalogue, defaultConfig(r.env))
	if err != nil {
		r.t.Fatalf("engine.Open: %v", err)
	}
	a := hwm.New(ae, hwm.Options{Owner: owner, Metrics: r.rec, PollInterval: 10 * time.Millisecond})
	return a, func() { ae.Close(); db.Close() }
}

// start runs a and returns its stop: end Run's context, wait for Run's
// result, close the pool.
func (r *stopRig) start(a *hwm.Advancer, closePool func()) func() error {
	runCtx, stop := context.WithCancel(r.ctx)
	done := make(chan error, 1)
	go func() { done <- a.Run(runCtx) }()
	return func() error {
		stop()
		err := <-done
		closePool()
		return err
	}
}

func (r *stopRig) run(owner string) (*hwm.Advancer, func() error) {
	a, closePool := r.open(owner)
	return a, r.start(a, closePool)
}

// testStopIsNotFailure: stopping an advancer (ending Run's context), idle or
// in the middle of a cycle, reports nothing through Metrics.Failed and Run
// returns nil.
func testStopIsNotFailure(t T, env *Env) {
	s, e := openStore(t, env)
	ctx, cancel := testtime.Context(context.Background(), 2*time.Minute)
	defer cancel()
	rec := &failureRecorder{}
	rig := &stopRig{t: t, env: env, ctx: ctx, rec: rec}
	open, start, run := rig.open, rig.start, rig.run
	appendOne := func() int64 {
		t.Helper()
		res, err := s.Append(ctx, eventstore.Stream{AggregateType: "bank.Account", AggregateID: "stop", Events: []eventstore.Event{ev("test.E", `{}`)}})
		if err != nil {
			t.Fatal(err)
		}
		return res.Positions[0]
	}

	// Idle: the advancer published everything and waits for work.
	a, stop := run("stop-idle")
	p1 := appendOne()
	deadline := testtime.Deadline(30 * time.Second)
	for a.Mark() < p1 && time.Now().Before(deadline) {
		a.Nudge()
		time.Sleep(5 * time.Millisecond)
	}
	if a.Mark() < p1 {
		t.Fatalf("running advancer did not publish %d (mark %d, last error %v)", p1, a.Mark(), a.Err())
	}
	if err := stop(); err != nil {
		t.Errorf("Run after an idle stop returned %v, want nil", err)
	}

	// Mid-cycle: a transaction holds the mark's row, so the advancer's
	// cycle, which has work, waits on it (it cannot finish while the row
	// is held); the stop arrives during that wait.
	p2 := appendOne()
	mid, closeMid := open("stop-mid-cycle")
	blocker, err := env.DB.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	table := e.Names.Shared["high_water_mark_store_table"]
	if _, err := blocker.ExecContext(ctx, "UPDATE "+table+" SET lease_owner = lease_owner WHERE topic_name = 'event-store'"); err != nil {
		_ = blocker.Rollback()
		t.Fatal(err)
	}
	stop = start(mid, closeMid)
	time.Sleep(100 * time.Millisecond) // let the cycle reach the held row; not an assertion
	stopped := make(chan error, 1)
	go func() { stopped <- stop() }()
	// Drivers that do not interrupt a waiting statement finish it once the
	// row is free, and the rest of the cycle meets the ended context.
	time.Sleep(50 * time.Millisecond)
	if err := blocker.Rollback(); err != nil {
		t.Fatal(err)
	}
	if err := <-stopped; err != nil {
		t.Errorf("Run after a stop in the middle of a cycle returned %v, want nil", err)
	}
	// Anywhere in a cycle: stops at spread-out moments while there is work
	// (inside a horizon check's transaction too, where lib/pq used to say
	// "transaction has already been committed or rolled back").
	for i := range 20 {
		p2 = appendOne()
		a, stop := run(fmt.Sprintf("stop-%d", i))
		a.Nudge()
		time.Sleep(time.Duration(i%5) * time.Millisecond)
		if err := stop(); err != nil {
			t.Errorf("Run after stop %d returned %v, want nil", i, err)
		}
	}
	for _, err := range rec.failures() {
		t.Errorf("a stop was reported as a failure: %v", err)
	}
	// The stopped advancers released their lease: another one publishes.
	if _, err := advanceUntil(ctx, advancerOf(e), s, p2); err != nil {
		t.Fatalf("after the stops: %v", err)
	}
}

// holderRecorder keeps the last HolderMetrics report.
type holderRecorder struct {
	failureRecorder
	hmu     sync.Mutex
	last    hwm.Holder
	held    bool
	reports int
}

func (h *holderRecorder) Holding(_ string, x hwm.Holder, held bool) {
	h.hmu.Lock()
	defer h.hmu.Unlock()
	h.last, h.held, h.reports = x, held, h.reports+1
}

func (h *holderRecorder) get() (hwm.Holder, bool, int) {
	h.hmu.Lock()
	defer h.hmu.Unlock()
	return h.last, h.held, h.reports
}

// otherDatabase opens a second fresh database of the target (on a server
// engine: another database of the same server, hence the same transaction
// id space). It skips when the target cannot give one.
func otherDatabase(t T, env *Env, e *engine.Engine) *sql.DB {
	t.Helper()
	if env.Target.Fresh == nil {
		skipf(t, "the target gives no second database (Target.Fresh is nil)")
	}
	ctx := context.Background()
	dsn, cleanup, err := env.Target.Fresh(ctx)
	if err != nil {
		skipf(t, "no second database: %v", err)
	}
	if cleanup != nil {
		t.Cleanup(cleanup)
	}
	db, err := sql.Open(env.Driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	var n int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+e.Names.Shared["high_water_mark_store_table"]).Scan(&n); err == nil {
		skipf(t, "Target.Fresh gave a database that already holds this test's tables: not a second database")
	}
	return db
}

// xidOf assigns tx its transaction id (xid.current) and returns it.
func xidOf(t T, env *Env, tx *sql.Tx) int64 {
	t.Helper()
	var x int64
	if err := tx.QueryRowContext(context.Background(), env.Catalogue.Statements[dialect.CurrentXID]).Scan(&x); err != nil {
		t.Fatalf("xid.current: %v", err)
	}
	return x
}

func skipUnlessHorizon(t T, env *Env) {
	t.Helper()
	if isCounter(env) {
		skipf(t, "positions are %s: the mark follows the committed counter, there is no transaction horizon", env.Catalogue.Positions)
	}
}

// testOtherDatabaseDoesNotHold: a transaction holding an id in another
// database of the same server does not hold this database's mark.
func testOtherDatabaseDoesNotHold(t T, env *Env) {
	skipUnlessHorizon(t, env)
	if env.Catalogue.Statements[dialect.OldestHolderXID] == "" {
		skipf(t, "the dialect has no %s: its horizon is cluster-wide, so a transaction in another database holds the mark", dialect.OldestHolderXID)
	}
	s, e := openStore(t, env)
	other := otherDatabase(t, env, e)
	ctx, cancel := testtime.Context(context.Background(), 2*time.Minute)
	defer cancel()
	otx, err := other.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer otx.Rollback()
	oxid := xidOf(t, env, otx)

	rec := &holderRecorder{}
	a := hwm.New(e, hwm.Options{Owner: "per-database", Metrics: rec})
	res, err := s.Append(ctx, eventstore.Stream{AggregateType: "bank.Account", AggregateID: "other-db", Events: []eventstore.Event{ev("test.E", `{}`)}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := advanceUntil(ctx, a, s, res.Positions[0]); err != nil {
		t.Fatalf("a transaction open in another database (id %d) held the mark: %v", oxid, err)
	}
	if sc := a.Scope(); sc != hwm.ScopeDatabase {
		t.Errorf("scope %q, want %q", sc, hwm.ScopeDatabase)
	}
	if h, held := a.OldestHolder(); held {
		t.Errorf("oldest holder reported after the mark moved: %+v", h)
	}
	if _, held, n := rec.get(); n == 0 || held {
		t.Errorf("holder metric: %d reports, last held=%v; want reports ending with none held", n, held)
	}
	for _, err := range rec.failures() {
		t.Errorf("cycle failed: %v", err)
	}
}

// testSameDatabaseHolds: transactions of this database still hold the mark
// while one of another database is open: one that only took an id (it may
// draw a position any moment) and one that appended, with a later append
// committed meanwhile and the pending end recorded past both. (One
// function, ~90 lines: both phases run against the same open transaction
// of the other database and the same advancer.)
func testSameDatabaseHolds(t T, env *Env) {
	skipUnlessHorizon(t, env)
	s, e := openStore(t, env)
	ctx, cancel := testtime.Context(context.Background(), 3*time.Minute)
	defer cancel()
	rec := &holderRecorder{}
	a := hwm.New(e, hwm.Options{Owner: "same-database", Metrics: rec})
	p0 := appendAndPublishWith(t, s, a)
	if env.Catalogue.Statements[dialect.OldestHolderXID] != "" {
		// Per-database horizon: an older transaction of another database
		// is open throughout and must not change anything below.
		otx, err := otherDatabase(t, env, e).BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer otx.Rollback()
		xidOf(t, env, otx)
	}
	appendOne := func(q *sql.Tx, id string) int64 {
		t.Helper()
		st := eventstore.Stream{AggregateType: "bank.Account", AggregateID: id, Events: []eventstore.Event{ev("test.E", fmt.Sprintf(`{"id":%q}`, id))}}
		var res eventstore.Appended
		var err error
		if q != nil {
			res, err = s.AppendTx(ctx, q, st)
		} else {
			res, err = s.Append(ctx, st)
		}
		if err != nil {
			t.Fatal(err)
		}
		return res.Positions[0]
	}
	holds := func(what string, low, held, x int64) {
		t.Helper()
		holdsMark(t, ctx, a, s, rec, what, low, held, x)
	}

	// 1. A transaction of this database that took an id and drew nothing.
	idTx, err := env.DB.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	idXID := xidOf(t, env, idTx)
	p1 := appendOne(nil, "after-id")
	holds("an id taken in this database", p0, p1, idXID)
	if err := idTx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if _, err := advanceUntil(ctx, a, s, p1); err != nil {
		t.Fatalf("after the id-holding transaction ended: %v", err)
	}

	// 2. An open append and a later one committed meanwhile.
	tx, err := env.DB.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	p2 := appendOne(tx, "open")
	txXID := xidOf(t, env, tx)
	p3 := appendOne(nil, "later")
	if p3 <= p2 {
		t.Fatalf("later append at %d, not after %d", p3, p2)
	}
	holds("an open append in this database", p1, p2, txXID)
	var pending sql.NullInt64
	if err := e.DB.QueryRowContext(ctx, "SELECT pending_end FROM "+e.Names.Shared["high_water_mark_store_table"]+" WHERE topic_name = 'event-store'").Scan(&pending); err != nil {
		t.Fatal(err)
	}
	if !pending.Valid || pending.Int64 < p3 {
		t.Errorf("pending_end %v while the append is open, want >= %d", pending, p3)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if _, err := advanceUntil(ctx, a, s, p3); err != nil {
		t.Fatalf("after the open append committed: %v", err)
	}
	got, err := s.ReadAll(ctx, p1, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].GlobalPosition != p2 || got[1].GlobalPosition != p3 {
		t.Errorf("read %d events after %d, want positions %d and %d", len(got), p1, p2, p3)
	}
	for _, err := range rec.failures() {
		t.Errorf("cycle failed: %v", err)
	}
}

// holdsMark cycles a few times and checks that the mark stays in [low,
// held) and that the oldest holder (advancer and metric) is transaction x
// or older (a server's own background transaction of this database,
// autovacuum's ANALYZE say, may be older).
func holdsMark(t T, ctx context.Context, a *hwm.Advancer, s *eventstore.Store, rec *holderRecorder, what string, low, held, x int64) {
	t.Helper()
	for range 10 {
		if _, err := a.Cycle(ctx); err != nil {
			t.Fatal(err)
		}
		m, err := s.Mark(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if m >= held || m < low {
			t.Fatalf("%s: mark %d, want in [%d, %d)", what, m, low, held)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if h, ok := a.OldestHolder(); !ok || h.XID > x {
		t.Errorf("%s: oldest holder %+v (held %v), want transaction %d or older", what, h, ok, x)
	}
	if h, held, _ := rec.get(); !held || h.XID > x {
		t.Errorf("%s: holder metric %+v (held %v), want transaction %d or older", what, h, held, x)
	}
}
