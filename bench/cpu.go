package main

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sort"
	"syscall"
	"time"

	"github.com/tidemarkdb/tidemark/core/eventstore"
)

// followCPU compares Follow's client cost per event, streamed (the
// default: the handler is called as rows are scanned) and buffered (each
// page read whole first, as Follow did before): process CPU (user + system,
// which includes an in-process engine such as SQLite), bytes and
// allocations per event, over a catch-up of the events stored. Rounds
// alternate the two sides; the figures are the medians of the rounds.
func (b *bench) followCPU(ctx context.Context) error {
	type side struct{ cpu, bytes, allocs []float64 }
	var sides [2]side
	for r := 0; r < *flagRounds; r++ {
		for i, buffered := range []bool{false, true} {
			cpu, bytes, allocs, err := b.followCost(ctx, buffered)
			if err != nil {
				return err
			}
			sides[i].cpu = append(sides[i].cpu, cpu)
			sides[i].bytes = append(sides[i].bytes, bytes)
			sides[i].allocs = append(sides[i].allocs, allocs)
		}
	}
	ratios := make([]float64, len(sides[0].cpu))
	for i := range ratios {
		ratios[i] = sides[0].cpu[i] / sides[1].cpu[i]
	}
	fmt.Printf("   cpu     Follow per event (pages of %d): streamed %.2f µs CPU, %.0f B, %.1f allocs; buffered %.2f µs CPU, %.0f B, %.1f allocs; CPU ratio streamed/buffered %s\n",
		*flagPage, median(sides[0].cpu), median(sides[0].bytes), median(sides[0].allocs),
		median(sides[1].cpu), median(sides[1].bytes), median(sides[1].allocs), summary(ratios))
	return nil
}

// followCost catches up once from position 0 to the mark and returns CPU
// µs, heap bytes and allocations per event.
func (b *bench) followCost(ctx context.Context, buffered bool) (float64, float64, float64, error) {
	mark, err := b.store.Mark(ctx)
	if err != nil {
		return 0, 0, 0, err
	}
	errDone := errors.New("caught up")
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	c0 := processCPU()
	n := 0
	err = b.store.Follow(ctx, 0, eventstore.FollowOptions{PageSize: *flagPage, Buffered: buffered}, func(r eventstore.Recorded) error {
		n++
		if r.GlobalPosition >= mark {
			return errDone
		}
		return nil
	})
	c1 := processCPU()
	runtime.ReadMemStats(&m1)
	if !errors.Is(err, errDone) {
		return 0, 0, 0, fmt.Errorf("follow: %w", err)
	}
	ev := float64(max(n, 1))
	return float64((c1 - c0).Microseconds()) / ev, float64(m1.TotalAlloc-m0.TotalAlloc) / ev, float64(m1.Mallocs-m0.Mallocs) / ev, nil
}

// processCPU is the process's user plus system CPU time so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return s[len(s)/2]
}
