package conformance

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/tidemarkdb/tidemark/core/consumer"
	"github.com/tidemarkdb/tidemark/core/eventstore"
	"github.com/tidemarkdb/tidemark/core/hwm"
	"github.com/tidemarkdb/tidemark/internal/testtime"
)

// waitFor checks cond until it holds (a bound against hanging, not a timed
// assertion).
func waitFor(t T, what string, cond func() bool) {
	t.Helper()
	waitForOr(t, what, cond, nil)
}

// waitForOr is waitFor that, when it gives up, also reports what state
// says (the state the failure left, for the cause).
func waitForOr(t T, what string, cond func() bool, state func() string) {
	t.Helper()
	err := testtime.Poll(context.Background(), what, 60*time.Second, 5*time.Millisecond,
		func() (bool, error) { return cond(), nil }, state)
	if err != nil {
		t.Fatalf("%v", err)
	}
}

// testConsumerRunWokenGracefulStop runs a consumer whose poll interval is
// far beyond the test's bound, so only the local advancer's wake-up can
// deliver; then stops it while an apply is in flight: the apply finishes
// and its checkpoint is saved.
func testConsumerRunWokenGracefulStop(t T, env *Env) {
	e := openEngine(t, env, defaultConfig(env))
	createApplied(t, env)
	adv := hwm.New(e, hwm.Options{PollInterval: 20 * time.Millisecond})
	s := eventstore.New(e, adv)
	advCtx, stopAdv := context.WithCancel(context.Background())
	defer stopAdv()
	go func() { _ = adv.Run(advCtx) }()
	reg := consumer.NewRegistry(e, nil)
	holdAt := make(chan int64, 1)
	inFlight, release := make(chan struct{}), make(chan struct{})
	opts := consumer.Options{Type: "projection", Name: "woken", Transactional: true, PollInterval: time.Hour,

		Routes: []consumer.Route{consumer.On(consumer.EventStore(s, adv), func(ctx context.Context, tx *sql.Tx, m consumer.Msg[eventstore.Recorded]) error {
			select {
			case p := <-holdAt:
				if p != m.Position {
					return fmt.Errorf("held position %d, applying %d", p, m.Position)
				}
				close(inFlight)
				<-release
			default:
			}
			return insertApplied(ctx, tx, m.Position)
		})}}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	r, err := consumer.NewRunner(ctx, reg, opts)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	for i := range 5 {
		if _, err := s.Append(ctx, eventstore.Stream{AggregateType: "test.Account", AggregateID: fmt.Sprintf("w-%d", i%2), Events: []eventstore.Event{ev("test.E", `{}`)}}); err != nil {
			t.Fatal(err)
		}
	}
	// It failed once in CI (the example dialect, under load): say where
	// everything stood.
	waitForOr(t, "5 applies", func() bool { return len(appliedCounts(t, env)) == 5 }, func() string {
		mark, merr := s.Mark(ctx)
		cps, cerr := reg.Checkpoints(context.Background(), r.Consumer().ID)
		return fmt.Sprintf("applied %v, mark %d (%v), checkpoints %+v (%v), advancer mark %d, last error %v, group commit %+v",
			appliedCounts(t, env), mark, merr, cps, cerr, adv.Mark(), adv.Err(), s.GroupCommitStats())
	})
	// The sixth event's apply is held in flight while the runner is stopped.
	mark, err := s.Mark(ctx)
	if err != nil {
		t.Fatal(err)
	}
	holdAt <- mark + 1
	res, err := s.Append(ctx, eventstore.Stream{AggregateType: "test.Account", AggregateID: "w-held", Events: []eventstore.Event{ev("test.E", `{}`)}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Positions[0] != mark+1 {
		t.Fatalf("the sixth event is at %d, want %d", res.Positions[0], mark+1)
	}
	waitFor(t, "the held apply", func() bool {
		select {
		case <-inFlight:
			return true
		default:
			return false
		}
	})
	stop()
	close(release)
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Run returned %v, want context.Canceled", err)
	}
	if n := appliedCounts(t, env)[res.Positions[0]]; n != 1 {
		t.Errorf("the apply in flight at the stop committed %d times, want 1", n)
	}
	cps, err := reg.Checkpoints(context.Background(), r.Consumer().ID)
	if err != nil {
		t.Fatal(err)
	}
	var top int64
	for _, cp := range cps {
		top = max(top, cp.Position)
	}
	if top != res.Positions[0] {
		t.Errorf("highest checkpoint %d after the stop, want %d (the apply in flight)", top, res.Positions[0])
	}
}
