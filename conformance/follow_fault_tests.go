package conformance

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/eventstore"
	"github.com/tidemarkdb/tidemark/core/hwm"
	"github.com/tidemarkdb/tidemark/core/sqlerr"
	"github.com/tidemarkdb/tidemark/internal/sqlcount"
	"github.com/tidemarkdb/tidemark/internal/testtime"
)

// The names extend eventstore/follow_streams_rows and
// eventstore/follow_buffered, so they get fresh databases as those do (one
// event table: Follow streams its pages unless Buffered).
func followFaultTests() []Test {
	return []Test{
		{"eventstore/follow_streams_rows_stop_before_commit", func(t T, env *Env) { followStopBeforeCommit(t, env, false) }},
		{"eventstore/follow_buffered_stop_before_commit", func(t T, env *Env) { followStopBeforeCommit(t, env, true) }},
		{"eventstore/follow_streams_rows_transient_retried", func(t T, env *Env) { followTransientRetried(t, env, false) }},
		{"eventstore/follow_buffered_transient_retried", func(t T, env *Env) { followTransientRetried(t, env, true) }},
	}
}

// faultRig is a store whose engine reaches the database through the
// target's real driver wrapped by sqlcount, whose hooks inject the faults,
// with events appended and the mark past them.
type faultRig struct {
	s         *eventstore.Store
	e         *engine.Engine
	counts    *sqlcount.Counts
	start     int64   // the mark before the appends
	positions []int64 // the appended events' positions
}

// newFaultRig appends n events and moves the mark past them. The hooks are
// set on counts by the caller and stay inert until it arms them.
func newFaultRig(ctx context.Context, t T, env *Env, n int, counts *sqlcount.Counts) *faultRig {
	t.Helper()
	e := countedEngine(t, env, oneEventTable(env), counts)
	s := eventstore.New(e, nil)
	a := hwm.New(e, hwm.Options{})
	start, err := advanceUntil(ctx, a, s, 0)
	if err != nil {
		t.Fatal(err)
	}
	evs := make([]eventstore.Event, n)
	for i := range evs {
		evs[i] = ev("test.E", fmt.Sprintf(`{"i":%d}`, i))
	}
	res, err := s.Append(ctx, eventstore.Stream{AggregateType: "bank.Account", AggregateID: newID(t), Events: evs})
	if err != nil {
		t.Fatalf("append: %v", err)
	}
	if _, err := advanceUntil(ctx, a, s, res.Positions[n-1]); err != nil {
		t.Fatal(err)
	}
	return &faultRig{s: s, e: e, counts: counts, start: start, positions: res.Positions}
}

// readsEvents tells whether q reads the event table (the page query of
// Follow; the mark's read names another table).
func (r *faultRig) readsEvents(q string) bool {
	return strings.Contains(strings.ToLower(q), strings.ToLower(r.e.Names.EventTables[0]))
}

// checkDelivered fails unless seen is the first want appended positions,
// each once, in order.
func (r *faultRig) checkDelivered(t T, seen []int64, want int) {
	t.Helper()
	if len(seen) != want {
		t.Errorf("Follow delivered %d events %v, want the first %d of %v", len(seen), seen, want, r.positions)
		return
	}
	for i, p := range seen {
		if p != r.positions[i] {
			t.Errorf("event %d delivered at position %d, want %d (delivered %v, appended %v)", i, p, r.positions[i], seen, r.positions)
			return
		}
	}
}

// followStopBeforeCommit stops Follow between a page's last row and the
// commit of its read transaction (the driver wrapper cancels the context
// when the second page's rows end): Follow returns ctx.Err(), never the
// sql.ErrTxDone of the read database/sql rolled back on the cancel, and
// what it delivered is whole pages read so far, each event once (streamed,
// the second page's rows were delivered as they were read; buffered, the
// second page is dropped with its rolled-back read).
func followStopBeforeCommit(t T, env *Env, buffered bool) {
	ctx, cancel := testtime.Context(context.Background(), 2*time.Minute)
	defer cancel()
	const pageSize = 5
	var armed atomic.Bool
	var pages atomic.Int32
	followCtx, stop := context.WithCancel(ctx)
	defer stop()
	rig := (*faultRig)(nil)
	counts := &sqlcount.Counts{AtEnd: func(_ context.Context, q string) {
		if !armed.Load() || !rig.readsEvents(q) || pages.Add(1) != 2 {
			return
		}
		stop()
		// database/sql's watcher of the transaction's context now marks
		// it done and rolls it back; letting it run first is the order in
		// which the commit reports sql.ErrTxDone rather than the cancel.
		for range 100 {
			runtime.Gosched()
		}
		time.Sleep(20 * time.Millisecond)
	}}
	rig = newFaultRig(ctx, t, env, 3*pageSize-2, counts)
	armed.Store(true)
	var seen []int64
	err := rig.s.Follow(followCtx, rig.start, eventstore.FollowOptions{PageSize: pageSize, Buffered: buffered}, func(r eventstore.Recorded) error {
		seen = append(seen, r.GlobalPosition)
		return nil
	})
	if ctx.Err() != nil {
		t.Fatalf("the test's own deadline passed: %v", ctx.Err())
	}
	if !errors.Is(err, context.Canceled) || errors.Is(err, sql.ErrTxDone) {
		t.Fatalf("Follow stopped between a page and its commit returned %v, want context.Canceled", err)
	}
	if n := pages.Load(); n != 2 {
		t.Fatalf("Follow read %d pages, want 2 (stopped at the end of the second)", n)
	}
	want := pageSize
	if !buffered {
		want = 2 * pageSize
	}
	rig.checkDelivered(t, seen, want)
}

// injectedError is a database error as the target's driver reports it,
// made to match one of the dialect's transient rules (its SQLSTATE or
// vendor code): what the driver wrapper returns in place of a statement's
// or a row's answer.
type injectedError struct {
	state string
	code  int64
}

func (e *injectedError) Error() string {
	return fmt.Sprintf("injected transient fault (SQLSTATE %q, code %d)", e.state, e.code)
}

// SQLState is the SQLSTATE of the rule matched, if it has one.
func (e *injectedError) SQLState() string { return e.state }

// VendorCode is the vendor code of the rule matched, if it has one.
func (e *injectedError) VendorCode() int64 { return e.code }

// transientFault returns an error the engine classifies as transient
// through the dialect's own rules, or nil when no rule can be matched
// without imitating a message. A serialization failure comes first where
// the dialect has one (a replica's recovery conflict is one: 40001).
func transientFault(e *engine.Engine, rules []dialect.ErrorRule) error {
	for _, class := range []dialect.ErrorClass{dialect.ErrSerializationFailure, dialect.ErrDeadlock, dialect.ErrLockTimeout, dialect.ErrConnectionLost} {
		for _, r := range rules {
			if r.Class != class || r.MessagePattern != "" || r.ConstraintPattern != "" || strings.Contains(r.SQLState, "*") ||
				r.SQLState == "" && r.VendorCode == 0 {
				continue
			}
			err := &injectedError{state: r.SQLState, code: r.VendorCode}
			if sqlerr.TransientClass(e.Errors.Classify(err)) {
				return err
			}
		}
	}
	return nil
}

// followTransientRetried injects transient errors, classified by the
// dialect's rules, into Follow's page reads: before the first page's query,
// mid-page (after two rows of the second read, which streamed were already
// delivered), and before the last row of a full page. Follow retries each
// from the last event it delivered: every position comes exactly once, in
// order, and the handler's error then ends Follow unchanged.
func followTransientRetried(t T, env *Env, buffered bool) {
	ctx, cancel := testtime.Context(context.Background(), 2*time.Minute)
	defer cancel()
	const pageSize, n = 5, 23
	var armed atomic.Bool
	var mu sync.Mutex
	reads, injected := 0, 0
	var fault error
	rig := (*faultRig)(nil)
	counts := &sqlcount.Counts{Fault: func(_ context.Context, q string, row int) error {
		if !armed.Load() || !rig.readsEvents(q) {
			return nil
		}
		mu.Lock()
		defer mu.Unlock()
		if row < 0 {
			reads++
		}
		// Read 1 fails before its query, read 2 after two rows, read 4
		// (the second page again after read 3 succeeded) before its last.
		if row < 0 && reads == 1 || row == 2 && reads == 2 || row == pageSize-1 && reads == 4 {
			injected++
			return fault
		}
		return nil
	}}
	rig = newFaultRig(ctx, t, env, n, counts)
	if fault = transientFault(rig.e, env.Catalogue.Errors); fault == nil {
		skipf(t, "the dialect has no transient error rule by SQLSTATE or vendor code to inject")
	}
	armed.Store(true)
	errDone := errors.New("all seen")
	var seen []int64
	var retries []error
	err := rig.s.Follow(ctx, rig.start, eventstore.FollowOptions{PageSize: pageSize, Buffered: buffered,
		OnRetry: func(_ int, err error) { retries = append(retries, err) }}, func(r eventstore.Recorded) error {
		seen = append(seen, r.GlobalPosition)
		if len(seen) == n {
			return errDone
		}
		return nil
	})
	if err != errDone { //nolint:errorlint // the handler's error must come back as it was returned
		t.Fatalf("Follow returned %v, want the handler's error after every event (delivered %v)", err, seen)
	}
	rig.checkDelivered(t, seen, n)
	mu.Lock()
	defer mu.Unlock()
	if injected != 3 || len(retries) != 3 {
		t.Errorf("%d faults injected, %d retries reported (%v), want 3 of each", injected, len(retries), retries)
	}
	for _, err := range retries {
		if !sqlerr.IsTransient(err) {
			t.Errorf("retried %v, which is not classified transient", err)
		}
	}
}
