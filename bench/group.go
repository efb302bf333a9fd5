package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tidemarkdb/tidemark/core/eventstore"
)

var flagGroupOnly = flag.Bool("group-only", false, "run only the group-commit cell")

// groupCommitCell measures single-event appends with group commit on, off
// and the plain-INSERT baseline, side by side in each round (the order
// rotates so that no side always runs on a warmer server): 16 writers
// (rate and p99 latency) and 1 writer (on vs off: group commit must not
// cost a lone writer).
func groupCommitCell(ctx context.Context, b *bench) {
	fmt.Printf("   group commit, single-event appends (load average %s):\n", loadAvg())
	for _, writers := range []int{16, 1} {
		// Stores of the cell's own, so their counts are the cell's.
		on := eventstore.New(b.e, b.adv, eventstore.WithGroupCommit(true))
		off := eventstore.New(b.e, b.adv, eventstore.WithGroupCommit(false))
		type side struct {
			name   string
			run    func(context.Context, *rand.Rand) error
			rate   float64
			ratios []float64
			lat    []time.Duration
		}
		sides := []*side{
			{name: "baseline", run: func(ctx context.Context, _ *rand.Rand) error { return b.baselineTx(ctx, 1) }},
			{name: "on", run: storeAppend(on)},
			{name: "off", run: storeAppend(off)},
		}
		for r := 0; r < *flagRounds; r++ {
			rates := map[string]float64{}
			for i := range sides {
				sd := sides[(i+r)%len(sides)]
				rate, lat := timedRate(ctx, writers, 1, sd.run)
				rates[sd.name] = rate
				sd.rate += rate
				sd.lat = append(sd.lat, lat...)
			}
			for _, sd := range sides {
				sd.ratios = append(sd.ratios, rates[sd.name]/rates["baseline"])
			}
		}
		after := on.GroupCommitStats()
		before := eventstore.GroupCommitStats{}
		n := float64(*flagRounds)
		for _, sd := range sides {
			p := percentiles(sd.lat, 0.5, 0.99)
			fmt.Printf("   %2d writers %-8s %8.0f ev/s  ratio to baseline %s  p50 %s  p99 %s\n",
				writers, sd.name, sd.rate/n, summary(sd.ratios), ms(p[0]), ms(p[1]))
		}
		if batches := after.Batches - before.Batches; batches > 0 {
			fmt.Printf("   %2d writers on: %.1f callers per transaction (at most %d)\n",
				writers, float64(after.Callers-before.Callers)/float64(batches), after.MaxCallers)
		}
	}
	fmt.Printf("   (load average after the cell: %s)\n", loadAvg())
}

func storeAppend(s *eventstore.Store) func(context.Context, *rand.Rand) error {
	return func(ctx context.Context, rng *rand.Rand) error {
		_, err := s.Append(ctx, eventstore.Stream{AggregateType: "bench.Account", AggregateID: fmt.Sprintf("acc-%d", rng.IntN(1_000_000)),
			Events: []eventstore.Event{{Type: "bench.Deposited", Payload: payload}}})
		return err
	}
}

// timedRate runs writers for one cell of *flagCell, each call of run
// storing perCall events, and returns events per second and every call's
// latency.
func timedRate(ctx context.Context, writers, perCall int, run func(context.Context, *rand.Rand) error) (float64, []time.Duration) {
	var events atomic.Int64
	var mu sync.Mutex
	var lat []time.Duration
	var firstErr atomic.Value
	deadline := time.Now().Add(*flagCell)
	start := time.Now()
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), uint64(time.Now().UnixNano())))
			var mine []time.Duration
			for time.Now().Before(deadline) {
				t0 := time.Now()
				if err := run(ctx, rng); err != nil {
					if eventstore.IsConflict(err) {
						continue
					}
					firstErr.CompareAndSwap(nil, err)
					break
				}
				mine = append(mine, time.Since(t0))
				events.Add(int64(perCall))
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	if err, _ := firstErr.Load().(error); err != nil {
		fmt.Printf("   (error during the cell: %v)\n", err)
	}
	return float64(events.Load()) / time.Since(start).Seconds(), lat
}
