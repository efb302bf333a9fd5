package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"time"

	"github.com/tidemarkdb/tidemark/core/consumer"
	"github.com/tidemarkdb/tidemark/core/eventstore"
	"github.com/tidemarkdb/tidemark/core/saga"
)

var flagSagaEvents = flag.Int("saga-events", 5000, "events (one per aggregate: as many saga instances, one deadline each) of the saga cell")

// benchSagaState is the saga cell's state.
type benchSagaState struct {
	Events int `json:"events"`
	Fired  int `json:"fired"`
}

// benchSaga starts one instance per aggregate on its first deposit and
// schedules a deadline that is due at once.
func benchSaga() *saga.Saga[benchSagaState] {
	s := saga.New[benchSagaState]("bench.Saga")
	saga.StartOnType(s, "bench.Deposited", func(e saga.Event[json.RawMessage]) string { return e.Recorded.AggregateID },
		func(ctx saga.Context, _ saga.Event[json.RawMessage], st *benchSagaState) error {
			st.Events++
			return saga.Schedule(ctx, "due", saga.In(-time.Millisecond), nil)
		})
	saga.OnDeadline(s, "due", func(_ saga.Context, _ struct{}, st *benchSagaState) error {
		st.Fired++
		return nil
	})
	// A later event of the aggregate correlates to its instance by the
	// saga id and updates its state (load, optimistic update).
	saga.OnType(s, "bench.Correlated", func(e saga.Event[json.RawMessage]) string { return e.Recorded.AggregateID },
		func(_ saga.Context, _ saga.Event[json.RawMessage], st *benchSagaState) error {
			st.Events++
			return nil
		})
	return s
}

// sagaCell: events → saga instances per second (each a new instance with
// a deadline) against a Transactional no-op consumer over the same events
// (both one transaction per event), then deadlines delivered per second
// (one transaction each: delete, load, update).
func sagaCell(ctx context.Context, fresh func() (*bench, string, error)) error {
	n := *flagSagaEvents
	b, _, err := loaded(ctx, fresh, n)
	if err != nil {
		return err
	}
	defer b.close()
	noop, _, err := runnerRate(ctx, b, "saga-noop", runnerKind{tx: true}, n)
	if err != nil {
		return err
	}
	st, err := saga.Open(b.e, benchSaga())
	if err != nil {
		return err
	}
	r, err := consumer.NewRunner(ctx, consumer.NewRegistry(b.e, nil), st.Options(consumer.EventStore(b.store, nil)))
	if err != nil {
		return err
	}
	start := time.Now()
	if err := pollAll(ctx, r.Poll, n, "saga applied events"); err != nil {
		return err
	}
	applied := float64(n) / time.Since(start).Seconds()
	// The streams' ids are random: an id drawn twice is one instance
	// whose deadline was scheduled again (replaced).
	status, err := saga.ReadStatus(ctx, b.e)
	if err != nil || len(status.Types) != 1 {
		return fmt.Errorf("saga status: %+v, %v", status, err)
	}
	want := int(status.Types[0].Deadlines)
	d, err := saga.NewDeadlines(b.e, []saga.Target{st}, saga.WithBatch(500))
	if err != nil {
		return err
	}
	start = time.Now()
	if err := pollAll(ctx, d.Poll, want, "deadlines delivered"); err != nil {
		return err
	}
	fmt.Printf("   saga catch-up, %d events → %d instances with a deadline each: %8.0f ev/s vs Transactional no-op consumer %8.0f ev/s  ratio %.2f; deadlines delivered %8.0f/s\n",
		n, want, applied, noop, applied/noop, float64(want)/time.Since(start).Seconds())
	if err := correlateCell(ctx, b, r, want, noop); err != nil {
		return err
	}
	// The same owner: this process still holds the lock row phase one took.
	for _, poll := range deadlinePolls() {
		if err := deadlineLatency(ctx, b, d.Owner(), poll); err != nil {
			return err
		}
	}
	return nil
}

// correlateCell appends one bench.Correlated event to each of up to n
// instances' aggregates and times r (the saga's runner) correlating them:
// each apply loads the instance by its saga id and updates its state
// (the optimistic update), one transaction per event, against the
// Transactional no-op consumer's rate measured before.
func correlateCell(ctx context.Context, b *bench, r *consumer.Runner, n int, noop float64) error {
	listed, err := saga.List(ctx, b.e, "bench.Saga", n)
	if err != nil {
		return err
	}
	for _, l := range listed {
		ev := eventstore.Event{Type: "bench.Correlated", Payload: payload}
		if _, err := b.store.Append(ctx, eventstore.Stream{AggregateType: "bench.Account", AggregateID: l.SagaID, Events: []eventstore.Event{ev}}); err != nil {
			return err
		}
	}
	if err := b.publish(ctx); err != nil {
		return err
	}
	start := time.Now()
	if err := pollAll(ctx, r.Poll, len(listed), "saga correlated events"); err != nil {
		return err
	}
	rate := float64(len(listed)) / time.Since(start).Seconds()
	fmt.Printf("   saga correlate, %d events → %d existing instances updated: %8.0f ev/s vs Transactional no-op consumer %8.0f ev/s  ratio %.2f\n",
		len(listed), len(listed), rate, noop, rate/noop)
	return nil
}
