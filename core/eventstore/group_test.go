package eventstore

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tidemarkdb/tidemark/internal/testtime"
)

// holdFirst is a Nudger that holds its first nudge until release closes:
// the leader of a lone append nudges before it passes the lead on, so the
// callers that arrive meanwhile queue, and the next batch is known.
type holdFirst struct {
	armed   atomic.Bool
	entered chan struct{}
	release chan struct{}
}

func (h *holdFirst) Nudge() {
	if h.armed.CompareAndSwap(true, false) {
		close(h.entered)
		<-h.release
	}
}

// hangGuard bounds every wait of the test: the old code hung here for ever.
const hangGuard = 30 * time.Second

// TestGroupCommitPanicAnswersEveryCaller: a panic inside a batch's
// transaction (the counter taken, the insert not run) answers each caller
// of the batch with a *GroupCommitPanicError instead of leaving them queued
// for ever, stores none of their events, and the next append commits (the
// lead passed on, the transaction and the store's locks were released).
func TestGroupCommitPanicAnswersEveryCaller(t *testing.T) {
	s := openSQLite(t)
	h := &holdFirst{entered: make(chan struct{}), release: make(chan struct{})}
	h.armed.Store(true)
	s.nudger = h
	var faulted atomic.Bool
	s.group.fault = func() {
		if faulted.CompareAndSwap(false, true) {
			panic("boom")
		}
	}
	ctx := context.Background()
	one := func(id string) Stream {
		return Stream{AggregateType: "t.A", AggregateID: id, Expected: NoStream, Events: []Event{{Type: "t.E", Payload: []byte(`{}`)}}}
	}
	leader := make(chan error, 1)
	go func() { _, err := s.Append(ctx, one("leader")); leader <- err }()
	waitUntil(t, "the leader's nudge", func() bool {
		select {
		case <-h.entered:
			return true
		default:
			return false
		}
	})
	const callers = 3
	errs := make([]error, callers)
	done := make([]chan struct{}, callers)
	for i := range callers {
		done[i] = make(chan struct{})
		go func() {
			defer close(done[i])
			defer func() {
				if v := recover(); v != nil {
					errs[i] = fmt.Errorf("Append panicked: %v", v) // the old code's leader
				}
			}()
			_, errs[i] = s.Append(ctx, one(fmt.Sprintf("c%d", i)))
		}()
		waitUntil(t, fmt.Sprintf("caller %d queued", i), func() bool { return s.GroupCommitStats().Queued == i+1 })
	}
	close(h.release)
	if err := <-leader; err != nil {
		t.Fatalf("the leader's lone append: %v", err)
	}
	for i := range callers {
		select {
		case <-done[i]:
		case <-testtime.After(hangGuard):
			t.Fatalf("caller %d of the panicking batch hung (no answer after %s)", i, hangGuard)
		}
	}
	if !faulted.Load() {
		t.Fatal("the fault never ran: the callers did not form a batch")
	}
	for i, err := range errs {
		var pe *GroupCommitPanicError
		if !errors.Is(err, ErrGroupCommitPanic) || !errors.As(err, &pe) || pe.Value != "boom" || len(pe.Stack) == 0 {
			t.Errorf("caller %d: want a *GroupCommitPanicError with the panic value, got %v", i, err)
		}
		got, err := s.Load(ctx, "t.A", fmt.Sprintf("c%d", i), -1)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 0 {
			t.Errorf("caller %d: %d events stored by a batch that panicked before its insert", i, len(got))
		}
	}
	after := make(chan error, 1)
	go func() { _, err := s.Append(ctx, one("after")); after <- err }()
	select {
	case err := <-after:
		if err != nil {
			t.Fatalf("an append after the panic: %v", err)
		}
	case <-testtime.After(hangGuard):
		t.Fatalf("an append after the panic hung: the lead was not passed on")
	}
	if q := s.GroupCommitStats().Queued; q != 0 {
		t.Errorf("%d callers still queued", q)
	}
}

// waitUntil polls cond until it holds; the deadline is a hang guard only.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := testtime.Deadline(hangGuard); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("waiting for %s: not reached after %s", what, hangGuard)
		}
	}
}

// TestPanicInAppendRollsBack: a panic inside a lone append's transaction
// (rows inserted, no commit) rolls the transaction back on the way out, so
// nothing is stored and the next append gets the write lock. On the old
// code the transaction stayed open: SQLite's write lock was held and the
// next append failed after the busy timeout (or the guard's deadline).
func TestPanicInAppendRollsBack(t *testing.T) {
	s := openSQLite(t)
	s.group = nil // a lone append, Append's own path
	var faulted atomic.Bool
	s.txFault = func() {
		if faulted.CompareAndSwap(false, true) {
			panic("boom")
		}
	}
	one := func(id string) Stream {
		return Stream{AggregateType: "t.A", AggregateID: id, Expected: NoStream, Events: []Event{{Type: "t.E", Payload: []byte(`{}`)}}}
	}
	func() {
		defer func() {
			if v := recover(); v != "boom" {
				t.Fatalf("recovered %v, want the fault's panic", v)
			}
		}()
		_, _ = s.Append(context.Background(), one("panicked"))
	}()
	ctx, cancel := testtime.Context(context.Background(), 5*time.Second) // a lock left held fails here or on the busy timeout
	defer cancel()
	if _, err := s.Append(ctx, one("next")); err != nil {
		t.Fatalf("the append after the panic: %v", err)
	}
	if got, err := s.Load(context.Background(), "t.A", "panicked", -1); err != nil || len(got) != 0 {
		t.Fatalf("the panicked append stored %d events (%v)", len(got), err)
	}
}
