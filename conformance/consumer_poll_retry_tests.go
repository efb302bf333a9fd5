package conformance

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tidemarkdb/tidemark/core/consumer"
	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/eventstore"
	"github.com/tidemarkdb/tidemark/core/hwm"
	"github.com/tidemarkdb/tidemark/core/sqlerr"
	"github.com/tidemarkdb/tidemark/internal/testtime"
)

// failingReads is the event store as a source whose reads (the range read
// of every partition, and a partition's read) fail once with a transient
// error when they read up to failAt or beyond: the read of the mark's last
// move.
type failingReads struct {
	*consumer.LogSource[eventstore.Recorded]
	failAt atomic.Int64 // 0: never
	fired  atomic.Bool
	ranges atomic.Int64 // range reads asked for
}

func (f *failingReads) fail(upto int64) error {
	if at := f.failAt.Load(); at > 0 && upto >= at && f.fired.CompareAndSwap(false, true) {
		return &sqlerr.Error{Class: dialect.ErrSerializationFailure,
			Err: fmt.Errorf("injected transient read failure up to %d", upto)}
	}
	return nil
}

// Read forwards to the event store's Read unless it fails.
func (f *failingReads) Read(ctx context.Context, partition int, after, upto int64, limit int) ([]consumer.Message, error) {
	if err := f.fail(upto); err != nil {
		return nil, err
	}
	return f.LogSource.Read(ctx, partition, after, upto, limit)
}

// ReadMarked forwards to the event store's ReadMarked unless it fails.
func (f *failingReads) ReadMarked(ctx context.Context, partition int, after, upto int64, limit int) ([]consumer.Message, int64, error) {
	if err := f.fail(upto); err != nil {
		return nil, 0, err
	}
	return f.LogSource.ReadMarked(ctx, partition, after, upto, limit)
}

// ReadRangeMarked forwards to the event store's range read unless it fails.
func (f *failingReads) ReadRangeMarked(ctx context.Context, after, upto int64, limit int) ([]consumer.Message, int64, error) {
	f.ranges.Add(1)
	if err := f.fail(upto); err != nil {
		return nil, 0, err
	}
	return f.LogSource.ReadRangeMarked(ctx, after, upto, limit)
}

// testPollFailedAfterLastWakeup runs a Transactional consumer whose poll
// interval is far beyond the test's bound, so only wake-ups make it poll
// (as consumer/run_woken_by_mark_graceful_stop), and fails with a
// transient error the read that reaches the mark's last move. Nothing will
// wake the runner again: it must poll again on its own, after a backoff,
// and apply every event once (a runner that waited for the next wake-up
// after a failed poll would wait PollInterval, an hour).
func testPollFailedAfterLastWakeup(t T, env *Env) {
	ctx, cancel := testtime.Context(context.Background(), 2*time.Minute)
	defer cancel()
	e := openEngine(t, env, defaultConfig(env))
	createApplied(t, env)
	// The test moves the mark itself (Cycle), so it knows the last move.
	adv := hwm.New(e, hwm.Options{})
	s := eventstore.New(e, adv)
	src := &failingReads{LogSource: consumer.EventStore(s, adv)}
	reg := consumer.NewRegistry(e, nil)
	r, err := consumer.NewRunner(ctx, reg, consumer.Options{Type: "projection", Name: "retried", Transactional: true,
		PollInterval: time.Hour,
		Routes: []consumer.Route{consumer.On(src, func(ctx context.Context, tx *sql.Tx, m consumer.Msg[eventstore.Recorded]) error {
			return insertApplied(ctx, tx, m.Position)
		})}})
	if err != nil {
		t.Fatal(err)
	}
	ids := idPerPartition(t, e)
	streams := make([]eventstore.Stream, len(ids))
	for i, id := range ids {
		streams[i] = eventstore.Stream{AggregateType: "test.Account", AggregateID: id, Events: []eventstore.Event{ev("test.E", `{}`)}}
	}
	res, err := s.Append(ctx, streams...)
	if err != nil {
		t.Fatal(err)
	}
	last := res.Positions[len(res.Positions)-1]
	src.failAt.Store(last)
	if _, err := advanceUntil(ctx, adv, s, last); err != nil {
		t.Fatal(err)
	}
	// The runner starts after the mark's last move: its first read, which
	// reaches the last position, fails, and nothing wakes it afterwards.
	// (Started before the appends, a runner whose read needs no mark of its
	// own may read every event before the fault is armed.)
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	var wg sync.WaitGroup
	wg.Add(1)
	var runErr error
	go func() { defer wg.Done(); runErr = r.Run(runCtx) }()
	waitForOr(t, fmt.Sprintf("%d applies", len(res.Positions)), func() bool { return len(appliedCounts(t, env)) == len(res.Positions) }, func() string {
		return fmt.Sprintf("applied %v, read failed: %v, range reads %d, advancer mark %d", appliedCounts(t, env), src.fired.Load(), src.ranges.Load(), adv.Mark())
	})
	stop()
	wg.Wait()
	if !errors.Is(runErr, context.Canceled) {
		t.Errorf("Run returned %v, want context.Canceled", runErr)
	}
	if !src.fired.Load() {
		t.Fatalf("no read up to the last move's mark %d was asked for: the fault was never injected", last)
	}
	for p, n := range appliedCounts(t, env) {
		if n != 1 {
			t.Errorf("position %d applied %d times, want once", p, n)
		}
	}
	t.Logf("range reads: %d (the failed one included)", src.ranges.Load())
}
