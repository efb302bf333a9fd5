package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/tidemarkdb/tidemark/core/consumer"
	"github.com/tidemarkdb/tidemark/core/eventstore"
	"github.com/tidemarkdb/tidemark/core/saga"
)

var (
	flagDeadlines     = flag.Int("saga-deadlines", 300, "deadlines of the saga cell's delivery-latency part (each due 200 ms after its start)")
	flagDeadlinePolls = flag.String("saga-deadline-polls", "50ms,200ms", "the deliverer's poll intervals in the saga cell's delivery-latency part (one run each)")
)

// deadlinePolls is -saga-deadline-polls (the bad ones left out, said).
func deadlinePolls() []time.Duration {
	var out []time.Duration
	for _, f := range strings.Split(*flagDeadlinePolls, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(f))
		if err != nil || d <= 0 {
			fmt.Printf("   (-saga-deadline-polls: %q is not a positive duration)\n", f)
			continue
		}
		out = append(out, d)
	}
	return out
}

// timedDue is a deadline's payload: when the process meant it to be due.
type timedDue struct {
	DueUnixNano int64 `json:"due"`
}

// deadlineLatency: a saga schedules, at each start, a deadline due 200 ms
// later (on the database clock), while events arrive at a steady rate and
// a deliverer polls every poll; the delay from due to
// delivered (the handler's call) is reported as p50/p99 against the poll
// interval, which bounds it from above when the deliverer keeps up.
func deadlineLatency(ctx context.Context, b *bench, owner string, poll time.Duration) error {
	const after = 200 * time.Millisecond
	var mu sync.Mutex
	var delays []time.Duration
	s := saga.New[benchSagaState]("bench.TimedSaga")
	saga.StartOnType(s, "bench.Timed", func(e saga.Event[json.RawMessage]) string { return e.Recorded.AggregateID },
		func(ctx saga.Context, _ saga.Event[json.RawMessage], st *benchSagaState) error {
			st.Events++
			return saga.Schedule(ctx, "due", saga.In(after), timedDue{time.Now().Add(after).UnixNano()})
		})
	saga.OnDeadline(s, "due", func(_ saga.Context, p timedDue, st *benchSagaState) error {
		mu.Lock()
		delays = append(delays, time.Since(time.Unix(0, p.DueUnixNano)))
		mu.Unlock()
		st.Fired++
		return saga.Complete
	})
	st, err := saga.Open(b.e, s)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	r, err := consumer.NewRunner(ctx, consumer.NewRegistry(b.e, nil), st.Options(consumer.EventStore(b.store, b.adv)))
	if err != nil {
		return err
	}
	d, err := saga.NewDeadlines(b.e, []saga.Target{st}, saga.WithPollInterval(poll), saga.WithOwner(owner))
	if err != nil {
		return err
	}
	var wg sync.WaitGroup
	for _, run := range []func(context.Context) error{b.adv.Run, r.Run, d.Run} {
		wg.Add(1)
		go func() { defer wg.Done(); _ = run(ctx) }()
	}
	defer func() { cancel(); wg.Wait() }()
	n := *flagDeadlines
	tick := time.NewTicker(10 * time.Millisecond) // 100 starts a second
	defer tick.Stop()
	rng := rand.New(rand.NewPCG(7, uint64(time.Now().UnixNano())))
	for i := range n {
		<-tick.C
		ev := eventstore.Event{Type: "bench.Timed", Payload: []byte(`{}`)}
		if _, err := b.store.Append(ctx, eventstore.Stream{AggregateType: "bench.Timed", AggregateID: fmt.Sprintf("t-%d-%d", i, rng.Int64()), Events: []eventstore.Event{ev}}); err != nil {
			return err
		}
	}
	deadline := time.Now().Add(time.Minute + 10*poll) // a hang guard, not a measurement
	for {
		mu.Lock()
		got := len(delays)
		mu.Unlock()
		if got >= n {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("delivered %d of %d deadlines", got, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	sort.Slice(delays, func(i, j int) bool { return delays[i] < delays[j] })
	fmt.Printf("   saga deadline delivery, %d deadlines at 100 starts/s, poll %v: due → delivered p50 %v, p99 %v (p99 / poll %.2f)\n",
		n, poll, delays[len(delays)/2].Round(time.Millisecond), delays[len(delays)*99/100].Round(time.Millisecond),
		float64(delays[len(delays)*99/100])/float64(poll))
	return nil
}
