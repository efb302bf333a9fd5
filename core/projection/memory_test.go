package projection_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/tidemarkdb/tidemark/core/eventstore"
	"github.com/tidemarkdb/tidemark/core/hwm"
	"github.com/tidemarkdb/tidemark/core/projection"
	"github.com/tidemarkdb/tidemark/internal/sqlitetest"
	"github.com/tidemarkdb/tidemark/internal/testtime"
)

type tally struct {
	Deposits []int `json:"deposits"`
	Sum      int   `json:"sum"`
}

type Deposited struct {
	Amount int `json:"amount"`
}

type Closed struct{}

func tallyProjection() *projection.Projection[tally] {
	p := projection.New[tally]("tally", nil)
	projection.On(p, func(e Deposited, s *tally) error {
		s.Deposits = append(s.Deposits, e.Amount)
		s.Sum += e.Amount
		return nil
	})
	projection.On(p, func(Closed, *tally) error { return projection.Delete })
	return p
}

// TestMemoryConcurrentReads: readers Get, All and Len while Run applies
// (run with -race); after Sync every read model holds exactly the events
// appended, a closed one is gone, and a reader's copy is its own.
func TestMemoryConcurrentReads(t *testing.T) {
	e := sqlitetest.Engine(t)
	ctx, cancel := testtime.Context(context.Background(), time.Minute)
	defer cancel()
	adv := hwm.New(e, hwm.Options{PollInterval: 5 * time.Millisecond})
	go func() { _ = adv.Run(ctx) }()
	store := eventstore.New(e, adv)
	m, err := projection.OpenMemory(ctx, e, tallyProjection(), projection.WithWaker(adv))
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- m.Run(runCtx) }()
	var readers sync.WaitGroup
	readCtx, stopReads := context.WithCancel(ctx)
	for range 3 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for readCtx.Err() == nil {
				if v, ok, err := m.Get("a-1"); err != nil || (ok && len(v.Deposits) == 0) {
					t.Errorf("Get: %+v %v %v", v, ok, err)
					return
				}
				if _, err := m.All(); err != nil {
					t.Error(err)
					return
				}
				_ = m.Len() + int(m.Position())
			}
		}()
	}
	const n = 40
	for i := range n {
		evs := []eventstore.Event{{Type: "Deposited", Payload: fmt.Appendf(nil, `{"amount":%d}`, i)}}
		if i == n-1 {
			evs = append(evs, eventstore.Event{Type: "Closed", Payload: []byte(`{}`)})
		}
		if _, err := store.Append(ctx, eventstore.Stream{AggregateType: "acc", AggregateID: fmt.Sprintf("a-%d", i%4), Events: evs}); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	stopReads()
	readers.Wait()
	all, err := m.All()
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 3 || m.Len() != 3 {
		t.Fatalf("%d read models (Len %d), want 3 (a-3 closed): %+v", len(all), m.Len(), all)
	}
	for k := range 3 {
		got := all[fmt.Sprintf("a-%d", k)]
		sum := 0
		for i := k; i < n; i += 4 {
			sum += i
		}
		if len(got.Deposits) != n/4 || got.Sum != sum {
			t.Errorf("a-%d: %+v, want %d deposits summing to %d", k, got, n/4, sum)
		}
	}
	all["a-0"].Deposits[0] = -1
	if again, _, _ := m.Get("a-0"); again.Deposits[0] == -1 {
		t.Error("a reader's copy shares its storage with the Memory")
	}
	stop()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Run after stop: %v, want context.Canceled", err)
	}
}

// TestMemoryListenerErrorStopsRun: a listener's error stops Run with an
// *ApplyError naming the event's position, and Sync returns it.
func TestMemoryListenerErrorStopsRun(t *testing.T) {
	e := sqlitetest.Engine(t)
	ctx, cancel := testtime.Context(context.Background(), time.Minute)
	defer cancel()
	adv := hwm.New(e, hwm.Options{PollInterval: 5 * time.Millisecond})
	go func() { _ = adv.Run(ctx) }()
	boom := errors.New("boom")
	p := projection.New[tally]("failing", nil)
	projection.On(p, func(e Deposited, s *tally) error {
		if e.Amount == 2 {
			return boom
		}
		s.Sum += e.Amount
		return nil
	})
	m, err := projection.OpenMemory(ctx, e, p, projection.WithWaker(adv))
	if err != nil {
		t.Fatal(err)
	}
	res, err := eventstore.New(e, adv).Append(ctx, eventstore.Stream{AggregateType: "acc", AggregateID: "x", Events: []eventstore.Event{
		{Type: "Deposited", Payload: []byte(`{"amount":1}`)}, {Type: "Deposited", Payload: []byte(`{"amount":2}`)}}})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	serr := m.Sync(ctx)
	rerr := <-done
	var ae *projection.ApplyError
	if !errors.As(rerr, &ae) || !errors.Is(rerr, boom) || ae.Position != res.Positions[1] {
		t.Fatalf("Run: %v, want an *ApplyError at position %d wrapping boom", rerr, res.Positions[1])
	}
	if !errors.Is(serr, boom) {
		t.Errorf("Sync: %v, want the Run's error", serr)
	}
	if got, _, _ := m.Get("x"); got.Sum != 1 || m.Position() != res.Positions[0] {
		t.Errorf("read model %+v at position %d, want sum 1 at %d", got, m.Position(), res.Positions[0])
	}
}

// TestOpenMemoryRefusesChained: a listener on read models is refused.
func TestOpenMemoryRefusesChained(t *testing.T) {
	p := tallyProjection()
	projection.OnReadModel(p, "upstream", func(projection.ReadModel[tally], *tally) error { return nil })
	_, err := projection.OpenMemory(context.Background(), nil, p)
	var de *projection.DeclarationError
	if !errors.As(err, &de) || !errors.Is(err, projection.ErrInvalidDeclaration) {
		t.Fatalf("OpenMemory of a chained projection: %v, want a *DeclarationError", err)
	}
}
