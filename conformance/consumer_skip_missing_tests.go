package conformance

import (
	"context"
	"slices"
	"time"

	"github.com/tidemarkdb/tidemark/core/consumer"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/eventstore"
	"github.com/tidemarkdb/tidemark/core/topic"
)

// testDeliverySkips: a skip recorded for the consumer is honoured by
// another instance (passed over: not applied, nothing recorded), stays
// until every partition's checkpoint passed it, then goes; a skip at a
// FAILED head's position deletes the row and frees the key.
func testDeliverySkips(t T, env *Env) {
	g := newDeliveryRig(t, env)
	ctx := context.Background()
	a1, b1, a2 := g.add("A", `{}`), g.add("B", `{}`), g.add("A", `{}`)
	r1 := g.runner("skips", false, exact(3), "")
	id := r1.Consumer().ID
	if err := g.reg.RecordSkip(ctx, id, consumer.Skip{Source: engine.EventStoreTopic, Partition: partitionOf("A", g.e.Partitions), Position: a1, Key: "test.Account/A"}); err != nil {
		t.Fatalf("record skip: %v", err)
	}
	r2 := g.runner("skips", false, exact(3), "") // a second instance
	g.poll(r2)
	if g.triesOf(a1) != 0 || g.appliedOf(b1) != 1 || g.appliedOf(a2) != 1 {
		t.Errorf("skipped position tried %d times; the others applied %d, %d times (want 0, 1, 1)", g.triesOf(a1), g.appliedOf(b1), g.appliedOf(a2))
	}
	if rows := g.rows(id); len(rows) != 0 {
		t.Errorf("a skipped message left undelivered rows: %v", rows)
	}
	skipsLeft := func() int {
		sk, err := g.reg.Skips(ctx, id, engine.EventStoreTopic, 0)
		if err != nil {
			t.Fatal(err)
		}
		return len(sk)
	}
	// Partitions without events save their checkpoints only after a
	// minute of the application's clock: until then the skip stays.
	g.poll(r2)
	if n := skipsLeft(); n != 1 {
		t.Errorf("%d skips left while some partitions' checkpoints were NULL, want 1", n)
	}
	g.clock.Add(time.Minute)
	g.poll(r2) // saves the empty stretches
	g.poll(r2) // every checkpoint is past the skip: it goes
	if n := skipsLeft(); n != 0 {
		t.Errorf("%d skips left once every checkpoint passed them, want 0", n)
	}
	// A skip of a FAILED head: the row goes, the key's WAITING row applies.
	c1, c2 := g.add("C", `{}`), g.add("C", `{}`)
	g.failing(c1, -1)
	g.poll(r2)
	g.wantRow(id, c1, consumer.StatusFailed, 1, g.clock.Now().Add(time.Second))
	g.wantRow(id, c2, consumer.StatusWaiting, 0, time.Time{})
	if err := g.reg.RecordSkip(ctx, id, consumer.Skip{Source: engine.EventStoreTopic, Partition: partitionOf("C", g.e.Partitions), Position: c1, Key: "test.Account/C"}); err != nil {
		t.Fatal(err)
	}
	g.poll(r1) // the first instance, its head not yet due: the skip decides
	if rows := g.rows(id); len(rows) != 0 || g.triesOf(c1) != 1 || !slices.Equal(g.order("test.Account/C"), []int64{c2}) {
		t.Errorf("after skipping the head: rows %v, head tried %d times, key C applied %v (want none, 1, [%d])", rows, g.triesOf(c1), g.order("test.Account/C"), c2)
	}
}

// gapSource reports the history below start deleted, as the capture topic
// does once retention passed a consumer.
type gapSource struct {
	consumer.SourceOf[eventstore.Recorded]
	start int64
}

func (s gapSource) Read(ctx context.Context, partition int, after, upto int64, limit int) ([]consumer.Message, error) {
	if after < s.start {
		return nil, &topic.MissingHistoryError{Topic: s.Name(), Position: after, TopicStart: s.start}
	}
	return s.SourceOf.Read(ctx, partition, after, upto, limit)
}

// testDeliveryMissingHistory: a read that finds its history deleted sets
// incomplete_through on every checkpoint of that source and halts the
// consumer MISSING_HISTORY; after a resume it goes on past the gap and the
// mark stays.
func testDeliveryMissingHistory(t T, env *Env) {
	g := newDeliveryRig(t, env)
	ctx := context.Background()
	var positions []int64
	for i := range 8 {
		positions = append(positions, g.add([]string{"A", "B", "C", "D"}[i%4], `{}`))
	}
	start := positions[3]
	src := gapSource{SourceOf: consumer.EventStore(g.s, nil), start: start}
	r, err := consumer.NewRunner(ctx, g.reg, consumer.Options{Type: "projection", Name: "gap",
		Routes: []consumer.Route{consumer.On(src, g.handler)}, Metrics: g.metrics})
	if err != nil {
		t.Fatal(err)
	}
	id := r.Consumer().ID
	g.poll(r)
	c := mustConsumer(t, g.reg, id)
	if c.State != consumer.Halted || c.HaltReason != consumer.MissingHistory {
		t.Fatalf("consumer %s (%s) after reading into deleted history, want HALTED MISSING_HISTORY", c.State, c.HaltReason)
	}
	checkMarks := func(when string) {
		t.Helper()
		marks, err := g.reg.IncompleteThrough(ctx, id, src.Name())
		if err != nil {
			t.Fatal(err)
		}
		for p := range g.e.Partitions {
			if marks[p] != start {
				t.Errorf("%s: partition %d incomplete_through %d, want %d", when, p, marks[p], start)
			}
		}
	}
	checkMarks("at the halt")
	if g.metrics.halted[consumer.MissingHistory] != 1 {
		t.Errorf("halt metrics %v", g.metrics.halted)
	}
	if err := g.reg.Resume(ctx, id); err != nil {
		t.Fatal(err)
	}
	pollUntil(t, r, func() bool {
		g.mu.Lock()
		defer g.mu.Unlock()
		return len(g.applied) >= len(positions)-4
	})
	for _, p := range positions {
		want := 0
		if p > start {
			want = 1
		}
		if n := g.appliedOf(p); n != want {
			t.Errorf("position %d applied %d times after the resume, want %d (history through %d is gone)", p, n, want, start)
		}
	}
	if c := mustConsumer(t, g.reg, id); c.State != consumer.Running {
		t.Errorf("consumer %s after the resume", c.State)
	}
	checkMarks("after the resume")
}
