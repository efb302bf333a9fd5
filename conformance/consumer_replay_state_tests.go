package conformance

import (
	"context"
	"errors"
	"time"

	"github.com/tidemarkdb/tidemark/core/consumer"
	"github.com/tidemarkdb/tidemark/core/engine"
)

// testConsumerReplayStates: a rebuild replayed while the consumer's
// runners poll (Registry.BeginReplay, a projection's rebuild) keeps the
// consumer REBUILDING until its switch; it may be paused and halted, and
// resuming it goes back to REBUILDING; the offline rebuild's steps are
// refused meanwhile; the switch makes it run under the next epoch. An
// offline rebuild begun while a replay is paused supersedes the replay
// (replay_through cleared), and a replay may not begin over an offline
// rebuild.
func testConsumerReplayStates(t T, env *Env) {
	_, e := openStore(t, env)
	ctx := context.Background()
	clock := newFakeClock()
	reg := consumer.NewRegistry(e, clock.Now)
	ref := consumer.Ref{Type: "projection", Name: "replayed"}
	c, err := reg.Subscribe(ctx, ref.Type, ref.Name, consumer.SourceRef{Name: engine.EventStoreTopic, Partitions: e.Partitions})
	if err != nil {
		t.Fatalf("subscribe: %v", err)
	}
	through := map[string]int64{engine.EventStoreTopic: 0} // nothing to replay: caught up at once
	since := clock.Add(time.Minute)
	if epoch, err := reg.BeginReplay(ctx, c.ID, through, nil); err != nil || epoch != 1 {
		t.Fatalf("BeginReplay = %d, %v; want epoch 1", epoch, err)
	}
	checkState(t, mustConsumer(t, reg, c.ID), consumer.Rebuilding, "", 1, since)
	steps := []struct {
		do     func() error
		state  consumer.State
		reason consumer.HaltReason
	}{
		{func() error { return reg.Pause(ctx, c.ID) }, consumer.Paused, ""},
		{func() error { return reg.Resume(ctx, c.ID) }, consumer.Rebuilding, ""},
		{func() error { return reg.Halt(ctx, c.ID, consumer.MissingHistory) }, consumer.Halted, consumer.MissingHistory},
		{func() error { return reg.Resume(ctx, c.ID) }, consumer.Rebuilding, ""},
	}
	for i, s := range steps {
		since = clock.Add(time.Minute)
		if err := s.do(); err != nil {
			t.Fatalf("step %d (to %s): %v", i, s.state, err)
		}
		checkState(t, mustConsumer(t, reg, c.ID), s.state, s.reason, 1, since)
	}
	clock.Add(time.Hour)
	expectErr[*consumer.TransitionError](t, reg.CompleteRebuild(ctx, c.ID, 1), "the offline rebuild's completion of a replay")
	_, err = reg.BeginRebuild(ctx, c.ID)
	expectErr[*consumer.TransitionError](t, err, "an offline rebuild's begin over a replay")
	expectErr[*consumer.TransitionError](t, reg.Resume(ctx, c.ID), "resuming a replaying consumer")
	checkState(t, mustConsumer(t, reg, c.ID), consumer.Rebuilding, "", 1, since)
	since = clock.Add(time.Minute)
	if err := reg.CompleteReplay(ctx, c.ID, 1, nil); err != nil {
		t.Fatalf("CompleteReplay: %v", err)
	}
	checkState(t, mustConsumer(t, reg, c.ID), consumer.Running, "", 2, since)
	checkReplaying(t, reg, c.ID, false, 2)
	testOfflineOverReplay(t, reg, c.ID, through, clock)
}

// testOfflineOverReplay: an offline rebuild begun over a paused replay
// supersedes it; a replay may not begin over an offline rebuild.
func testOfflineOverReplay(t T, reg *consumer.Registry, id string, through map[string]int64, clock *fakeClock) {
	t.Helper()
	ctx := context.Background()
	if _, err := reg.BeginReplay(ctx, id, through, nil); err != nil {
		t.Fatalf("BeginReplay: %v", err)
	}
	if err := reg.Pause(ctx, id); err != nil {
		t.Fatalf("Pause of the replay: %v", err)
	}
	since := clock.Add(time.Minute)
	if epoch, err := reg.BeginRebuild(ctx, id); err != nil || epoch != 4 {
		t.Fatalf("BeginRebuild over the paused replay = %d, %v; want epoch 4", epoch, err)
	}
	checkState(t, mustConsumer(t, reg, id), consumer.Rebuilding, "", 4, since)
	checkReplaying(t, reg, id, false, 4)
	if err := reg.CompleteReplay(ctx, id, 3, nil); !errors.Is(err, consumer.ErrNotReplaying) {
		t.Errorf("CompleteReplay of the superseded replay: %v, want ErrNotReplaying", err)
	}
	_, err := reg.BeginReplay(ctx, id, through, nil)
	expectErr[*consumer.TransitionError](t, err, "a replay's begin over an offline rebuild")
	since = clock.Add(time.Minute)
	if err := reg.CompleteRebuild(ctx, id, 4); err != nil {
		t.Fatalf("CompleteRebuild: %v", err)
	}
	checkState(t, mustConsumer(t, reg, id), consumer.Running, "", 4, since)
}

func checkReplaying(t T, reg *consumer.Registry, id string, want bool, epoch int64) {
	t.Helper()
	rp, err := reg.ReplayOf(context.Background(), reg.Engine().DB, id)
	if err != nil || rp.Replaying != want || rp.Epoch != epoch {
		t.Errorf("replay %+v (%v), want replaying %v under epoch %d", rp, err, want, epoch)
	}
}
