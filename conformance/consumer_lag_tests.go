package conformance

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/tidemarkdb/tidemark/core/consumer"
	"github.com/tidemarkdb/tidemark/core/eventstore"
	"github.com/tidemarkdb/tidemark/core/hwm"
)

// lagRecorder keeps the last lag reported per partition.
type lagRecorder struct {
	consumer.NopMetrics
	mu   sync.Mutex
	last map[int]int64
}

func (l *lagRecorder) Lag(_ consumer.Consumer, _ string, partition int, lag int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.last[partition] = lag
}

// testConsumerIdleLagZero: a consumer over 16 partitions applies all 6
// events (2 aggregates: at most 2 partitions hold any) and stops
// gracefully. It lags nothing: the operator's list and status show lag 0
// on every partition (the stop saved the partitions read up to the mark
// with nothing to apply) and the last lag the runner reported is 0 for
// every partition.
func testConsumerIdleLagZero(t T, env *Env) {
	cfg := defaultConfig(env)
	cfg.Partitions = 16
	e := openEngine(t, env, cfg)
	createApplied(t, env)
	adv := hwm.New(e, hwm.Options{PollInterval: 20 * time.Millisecond})
	s := eventstore.New(e, adv)
	advCtx, stopAdv := context.WithCancel(context.Background())
	defer stopAdv()
	go func() { _ = adv.Run(advCtx) }()
	rec := &lagRecorder{last: map[int]int64{}}
	reg := consumer.NewRegistry(e, nil)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	r, err := consumer.NewRunner(ctx, reg, consumer.Options{Type: "projection", Name: "idle-lag", Transactional: true,
		PollInterval: 20 * time.Millisecond, Metrics: rec,
		Sources: []consumer.Source{consumer.EventStoreSource{Store: s, Waker: adv}},
		Handler: func(ctx context.Context, tx *sql.Tx, m consumer.Message) error {
			return insertApplied(ctx, tx, m.Position)
		}})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	for i := range 6 {
		if _, err := s.Append(ctx, eventstore.Stream{AggregateType: "test.Account", AggregateID: fmt.Sprintf("lag-%d", i%2),
			Events: []eventstore.Event{ev("test.E", `{}`)}}); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "6 applies", func() bool { return len(appliedCounts(t, env)) == 6 })
	waitFor(t, "the runner's lag reported after the applies", func() bool {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		return len(rec.last) == 16
	})
	stop()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("run: %v", err)
	}
	rec.mu.Lock()
	for p, lag := range rec.last {
		if lag != 0 {
			t.Errorf("the runner last reported lag %d for partition %d, want 0 (everything applied)", lag, p)
		}
	}
	rec.mu.Unlock()
	op := reg.Operator()
	all, err := op.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	st, err := op.Status(context.Background(), consumer.Ref{Type: "projection", Name: "idle-lag"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range append(all, st) {
		if c.Type != "projection" || c.Name != "idle-lag" {
			continue
		}
		total := int64(0)
		for _, p := range c.Partitions {
			total += p.Lag
			if p.Mark == nil || *p.Mark == 0 {
				t.Errorf("partition %d shows no mark", p.Partition)
			}
		}
		if total != 0 {
			t.Errorf("the stopped, caught-up consumer shows lag %d (per partition: %+v), want 0", total, c.Partitions)
		}
	}
}
