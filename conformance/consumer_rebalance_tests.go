package conformance

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/tidemarkdb/tidemark/core/eventstore"
	"github.com/tidemarkdb/tidemark/core/lease"
	"github.com/tidemarkdb/tidemark/internal/testtime"
)

// testConsumerRebalanceJoinsNoDuplicates: three instances (OS processes)
// of one consumer with partition leases and a non-transactional handler
// join one after the other while events keep coming; nobody crashes or
// pauses. Each join moves partitions between live instances, handed over
// cooperatively (the old owner finishes its applies and saves before it
// releases), so every position is applied exactly once. No lease may
// lapse (an expired lease allows redelivery): leases live 30 s, scaled by
// the machine's load, where the other lease tests use 1.5 s.
func testConsumerRebalanceJoinsNoDuplicates(t T, env *Env) {
	cfg := defaultConfig(env)
	cfg.Partitions = 16
	e := openEngine(t, env, cfg)
	s := eventstore.New(e, nil)
	createLeaseApplied(t, env.DB)
	ctx, cancel := testtime.Context(context.Background(), 6*time.Minute)
	defer cancel()

	var (
		mu        sync.Mutex
		positions []int64
		appendErr error
	)
	stopAppend := make(chan struct{})
	appended := make(chan struct{})
	go func() {
		defer close(appended)
		for i := 0; ; i++ {
			select {
			case <-stopAppend:
				return
			default:
			}
			res, err := s.Append(ctx, eventstore.Stream{AggregateType: "test.Account", AggregateID: fmt.Sprintf("j-%d", i%64),
				Events: []eventstore.Event{ev("test.E", fmt.Sprintf(`{"i":%d}`, i))}})
			if err == nil {
				_, err = advanceUntil(ctx, advancerOf(e), s, res.Positions[0])
			}
			mu.Lock()
			if err != nil {
				appendErr = err
			} else {
				positions = append(positions, res.Positions...)
			}
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	appliedAtLeast := func(n int) func() bool {
		return func() bool { return distinctApplied(ctx, env.DB) >= n }
	}
	const parts = 16
	var ws []*liveWorker
	var ids []string
	for i := range 3 {
		w := startLive(ctx, t, leasedJob(env, cfg, leasedArgs{Consumer: "joins", NonTransactional: true, ApplyMillis: 2,
			LeaseMillis: int(testtime.D(30 * time.Second).Milliseconds())}))
		ws = append(ws, w)
		ids = append(ids, strings.TrimPrefix(w.expect(ctx, t, "joined "), "joined "))
		w.send(t, "go")
		waitLeases(ctx, t, e, "joins", fmt.Sprintf("16 partitions over %d instances", i+1),
			func(st []lease.PartitionLease) bool { return spreadOver(st, parts, ids) })
		// Applies flow under this spread before the next instance joins.
		waitRows(ctx, t, e, "applies under the new spread", appliedAtLeast(distinctApplied(ctx, env.DB)+40))
	}
	close(stopAppend)
	<-appended
	mu.Lock()
	all, aerr := positions, appendErr
	mu.Unlock()
	if aerr != nil {
		t.Fatalf("appending: %v", aerr)
	}
	waitRows(ctx, t, e, "every position applied", appliedAtLeast(len(all)))
	for _, w := range ws {
		w.send(t, "stop")
	}
	for _, w := range ws {
		if r := w.result(ctx, t); !r.OK {
			t.Fatalf("an instance failed: %s %s", r.ErrorKind, r.Error)
		}
	}
	rows, err := readLeaseApplied(ctx, env.DB)
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]int{}
	for _, r := range rows {
		by[r.instance]++
	}
	t.Logf("%d positions, %d applies; by instance %v", len(all), len(rows), by)
	checkAppliedOnceUnderLeases(t, rows, all)
	if t.Failed() {
		for i, w := range ws {
			for _, l := range strings.Split(w.w.stderr.String(), "\n") {
				if strings.Contains(l, "lapse") || strings.Contains(l, "took over") || strings.Contains(l, "lease lost") ||
					strings.Contains(l, "revok") || strings.Contains(l, "ownership changed") {
					t.Logf("instance %d: %s", i, l)
				}
			}
		}
	}
}
