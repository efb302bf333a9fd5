package hwm_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/tidemarkdb/tidemark/core/eventstore"
	"github.com/tidemarkdb/tidemark/core/hwm"
	"github.com/tidemarkdb/tidemark/internal/testtime"
)

// gate is a Metrics whose Observe, the end of every cycle, hands the mark
// to the test and waits for it to let the cycle end.
type gate struct {
	entered chan int64
	release chan struct{}
	done    chan struct{}
}

func (g *gate) Observe(_ string, mark, _ int64) {
	select {
	case g.entered <- mark:
		<-g.release
	case <-g.done:
	}
}
func (g *gate) Failed(string, error) {}

// next waits for the next cycle to reach Observe and returns its mark (the
// bound only guards against a hang).
func (g *gate) next(t *testing.T, what string) int64 {
	t.Helper()
	select {
	case m := <-g.entered:
		return m
	case <-testtime.After(30 * time.Second):
		t.Fatalf("no cycle: %s", what)
		return 0
	}
}

// TestNudgesCoalesceIntoOneCycle: with the poll an hour away, appends
// committed while a cycle runs start exactly one cycle after it, which
// publishes them all; an append after that, with the advancer idle, starts
// the next cycle, and no cycle ran between the two.
func TestNudgesCoalesceIntoOneCycle(t *testing.T) {
	e := newEngine(t)
	g := &gate{entered: make(chan int64), release: make(chan struct{}), done: make(chan struct{})}
	a := hwm.New(e, hwm.Options{PollInterval: time.Hour, Metrics: g})
	s := eventstore.New(e, a)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	defer func() { cancel(); close(g.done); <-done }()
	appendOne := func(i int) int64 {
		t.Helper()
		res, err := s.Append(ctx, eventstore.Stream{AggregateType: "bank.Account", AggregateID: fmt.Sprintf("a-%d", i),
			Events: []eventstore.Event{{Type: "test.E", Payload: []byte(`{}`)}}})
		if err != nil {
			t.Fatal(err)
		}
		return res.Positions[0]
	}
	if m := g.next(t, "Run's first cycle"); m != 0 {
		t.Fatalf("first cycle saw mark %d on an empty store", m)
	}
	var last int64
	for i := range 3 {
		last = appendOne(i) // each nudges while the first cycle is held in Observe
	}
	g.release <- struct{}{}
	if m := g.next(t, "the cycle the appends' nudges queued"); m != last {
		t.Fatalf("the cycle after three nudges left the mark at %d, want %d", m, last)
	}
	g.release <- struct{}{}
	idle := appendOne(3)
	if m := g.next(t, "the cycle an idle nudge starts"); m != idle {
		t.Fatalf("the cycle after the idle nudge saw mark %d, want %d (a cycle ran between)", m, idle)
	}
	g.release <- struct{}{}
}

// TestCycleBesideRun: cycles forced by the caller while Run cycles (what
// tests and operators do) run one at a time — under -race, the advancer's
// own state was written by both before — and the mark still reaches every
// committed append.
func TestCycleBesideRun(t *testing.T) {
	e := newEngine(t)
	a := hwm.New(e, hwm.Options{PollInterval: time.Millisecond})
	s := eventstore.New(e, a)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	defer func() { cancel(); <-done }()
	var last int64
	for i := range 50 {
		res, err := s.Append(ctx, eventstore.Stream{AggregateType: "bank.Account", AggregateID: fmt.Sprintf("a-%d", i),
			Events: []eventstore.Event{{Type: "test.E", Payload: []byte(`{}`)}}})
		if err != nil {
			t.Fatal(err)
		}
		last = res.Positions[0]
		if _, err := a.Cycle(ctx); err != nil {
			t.Fatalf("Cycle beside Run: %v", err)
		}
	}
	for a.Mark() < last {
		if _, err := a.Cycle(ctx); err != nil {
			t.Fatalf("Cycle beside Run: %v", err)
		}
	}
}
