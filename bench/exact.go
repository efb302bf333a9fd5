package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/tidemarkdb/tidemark/core/eventstore"
	"github.com/tidemarkdb/tidemark/internal/sqlcount"
)

// ownedStream is a stream one writer appends to at a time, with the
// version its last append left.
type ownedStream struct {
	id      string
	version int64 // -1: empty
}

// streamPool hands each call a stream no other call holds, so appends
// with exact expected versions never conflict: what an application that
// serialises the commands of one aggregate sends.
type streamPool struct{ free chan *ownedStream }

// newStreamPool is a pool of n streams named prefix-0 … prefix-(n-1), each
// at version.
func newStreamPool(prefix string, n int, version int64) *streamPool {
	p := &streamPool{free: make(chan *ownedStream, n)}
	for i := range n {
		p.free <- &ownedStream{id: fmt.Sprintf("%s-%d", prefix, i), version: version}
	}
	return p
}

// run returns a writer's call: a single-event append to a free stream of
// the pool, with Exactly(its version) when exact, else with Any.
func (p *streamPool) run(s *eventstore.Store, exact bool) func(context.Context, *rand.Rand) error {
	return func(ctx context.Context, _ *rand.Rand) error {
		st := <-p.free
		defer func() { p.free <- st }()
		want := eventstore.Any
		if exact {
			want = eventstore.NoStream
			if st.version >= 0 {
				want = eventstore.Exactly(st.version)
			}
		}
		res, err := s.Append(ctx, eventstore.Stream{AggregateType: "bench.Account", AggregateID: st.id, Expected: want,
			Events: []eventstore.Event{{Type: "bench.Deposited", Payload: payload}}})
		if err != nil {
			var ce *eventstore.ConcurrencyError
			if errors.As(err, &ce) {
				st.version = ce.Actual
			}
			return err
		}
		st.version = res.Versions["bench.Account/"+st.id]
		return nil
	}
}

var (
	flagExactOnly    = flag.Bool("exact-only", false, "run only the exact-expected-version cells")
	flagExactLengths = flag.String("exact-lengths", "10,10000,100000", "events per stream of the exact-expected-version cells")
)

// exactStreams is the number of streams of an exact-version cell: one per
// writer of the widest cell, so no two writers ever share a stream.
const exactStreams = 16

// exactCells measures single-event appends with exact expected versions
// against Any appends to the same streams and the plain-INSERT baseline,
// at 1, 4 and 16 writers, over streams already holding each of
// -exact-lengths events (group commit on, as by default). Each length
// runs on a fresh database; the three sides alternate in every round.
func (c cells) exactCells(ctx context.Context) error {
	for _, f := range strings.Split(*flagExactLengths, ",") {
		length, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || length < 1 {
			return fmt.Errorf("-exact-lengths: %q is not a stream length", f)
		}
		if jvmCap := 10000; (c.tg.dialect == "h2" || c.tg.dialect == "hsqldb") && length > jvmCap {
			fmt.Printf("   exact   streams of %d events: skipped on in-memory %s (%d streams would keep %d CLOBs on the JVM heap)\n",
				length, c.tg.dialect, exactStreams, exactStreams*length)
			continue
		}
		var counts sqlcount.Counts
		b, err := c.freshCounted(ctx, &counts)
		if err != nil {
			return err
		}
		err = b.exactCell(ctx, length, &counts)
		b.close()
		if err != nil {
			return err
		}
	}
	return nil
}

// exactCell loads exactStreams streams of length events and runs the
// writer counts over them. counts counts the statements of b's database:
// each side prints the statements it sent per append (BEGIN and COMMIT
// included; the advancer's, running beside it, too).
func (b *bench) exactCell(ctx context.Context, length int, counts *sqlcount.Counts) error {
	start := time.Now()
	for s := range exactStreams {
		if err := b.loadStream(ctx, fmt.Sprintf("x-%d", s), length); err != nil {
			return err
		}
	}
	fmt.Printf("   exact   %d streams of %d events (loaded in %s; load average %s):\n",
		exactStreams, length, time.Since(start).Round(time.Second), loadAvg())
	pool := newStreamPool("x", exactStreams, int64(length-1))
	for _, writers := range []int{1, 4, 16} {
		type side struct {
			name   string
			run    func(context.Context, *rand.Rand) error
			rate   float64
			ratios []float64
			lat    []time.Duration
			calls  atomic.Int64
			stmts  int64
		}
		sides := []*side{
			{name: "baseline", run: func(ctx context.Context, _ *rand.Rand) error { return b.baselineTx(ctx, 1) }},
			{name: "Any", run: pool.run(b.store, false)},
			{name: "exact", run: pool.run(b.store, true)},
		}
		for _, sd := range sides {
			run := sd.run
			sd.run = func(ctx context.Context, r *rand.Rand) error {
				err := run(ctx, r)
				if err == nil {
					sd.calls.Add(1)
				}
				return err
			}
		}
		var exactToAny []float64
		for r := 0; r < *flagRounds; r++ {
			rates := map[string]float64{}
			for i := range sides {
				sd := sides[(i+r)%len(sides)]
				before := counts.Total()
				rate, lat := timedRate(ctx, writers, 1, sd.run)
				sd.stmts += counts.Total() - before
				rates[sd.name] = rate
				sd.rate += rate
				sd.lat = append(sd.lat, lat...)
			}
			for _, sd := range sides {
				sd.ratios = append(sd.ratios, rates[sd.name]/rates["baseline"])
			}
			exactToAny = append(exactToAny, rates["exact"]/rates["Any"])
		}
		n := float64(*flagRounds)
		for _, sd := range sides[1:] {
			p := percentiles(sd.lat, 0.5, 0.99)
			fmt.Printf("   exact   %2d writers %-5s %8.0f ev/s vs baseline %8.0f ev/s  ratio %s  p50 %s  p99 %s  statements per append %.2f (baseline %.2f)\n",
				writers, sd.name, sd.rate/n, sides[0].rate/n, summary(sd.ratios), ms(p[0]), ms(p[1]),
				perCall(sd.stmts, sd.calls.Load()), perCall(sides[0].stmts, sides[0].calls.Load()))
		}
		fmt.Printf("   exact   %2d writers exact / Any %s\n", writers, summary(exactToAny))
	}
	return nil
}

// perCall is n per call, 0 without calls.
func perCall(n, calls int64) float64 {
	if calls == 0 {
		return 0
	}
	return float64(n) / float64(calls)
}

// loadStream appends length events to stream id, 5,000 an append.
func (b *bench) loadStream(ctx context.Context, id string, length int) error {
	evs := make([]eventstore.Event, 5000)
	for i := range evs {
		evs[i] = eventstore.Event{Type: "bench.Deposited", Payload: payload}
	}
	for done := 0; done < length; {
		k := min(len(evs), length-done)
		want := eventstore.NoStream
		if done > 0 {
			want = eventstore.Exactly(int64(done - 1))
		}
		if _, err := b.store.Append(ctx, eventstore.Stream{AggregateType: "bench.Account", AggregateID: id, Expected: want, Events: evs[:k]}); err != nil {
			return fmt.Errorf("loading %s: %w", id, err)
		}
		done += k
	}
	return nil
}
