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
	"github.com/tidemarkdb/tidemark/internal/testtime"
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

		Routes: []consumer.Route{consumer.On(consumer.EventStore(s, adv), func(ctx context.Context, tx *sql.Tx, m consumer.Msg[eventstore.Recorded]) error {
			return insertApplied(ctx, tx, m.Position)
		})}})
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

// cancelOnReadSource is the event store as a source whose first read,
// once armed, that reaches past position past ends the runner's context
// and fails as a cancelled read does (what it read is dropped): the
// graceful stop's cancel arriving in the middle of the poll's read of a new
// event. (A read that reads its own mark may begin before the event
// commits and still return it.)
type cancelOnReadSource struct {
	*consumer.LogSource[eventstore.Recorded]
	mu     sync.Mutex
	armed  bool
	past   int64
	cancel context.CancelFunc
}

// fire ends the run's context if armed and msgs reach past s.past, and
// tells whether it did.
func (s *cancelOnReadSource) fire(msgs []consumer.Message) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.armed && len(msgs) > 0 && msgs[len(msgs)-1].Position > s.past {
		s.armed = false
		s.cancel()
		return true
	}
	return false
}

func (s *cancelOnReadSource) Read(ctx context.Context, partition int, after, upto int64, limit int) ([]consumer.Message, error) {
	msgs, err := s.LogSource.Read(ctx, partition, after, upto, limit)
	if err == nil && s.fire(msgs) {
		return nil, context.Canceled
	}
	return msgs, err
}

// ReadRangeMarked: the runner reads every partition at once through it
// when it holds them all.
func (s *cancelOnReadSource) ReadRangeMarked(ctx context.Context, after, upto int64, limit int) ([]consumer.Message, int64, error) {
	msgs, mark, err := s.LogSource.ReadRangeMarked(ctx, after, upto, limit)
	if err == nil && s.fire(msgs) {
		return nil, 0, context.Canceled
	}
	return msgs, mark, err
}

func (s *cancelOnReadSource) ReadMarked(ctx context.Context, partition int, after, upto int64, limit int) ([]consumer.Message, int64, error) {
	msgs, mark, err := s.LogSource.ReadMarked(ctx, partition, after, upto, limit)
	if err == nil && s.fire(msgs) {
		return nil, 0, context.Canceled
	}
	return msgs, mark, err
}

// testConsumerStopDuringReadSaves: a consumer over 16 partitions applies 6
// events and reads every partition up to the mark (idle ones unsaved: the
// application clock never lets EmptySaveInterval pass); then a 7th event
// is appended and the stop arrives while the next poll reads it. The stop
// still saves every partition up to where it was read before that read:
// a failed read drops only what it read, not the runner's state.
func testConsumerStopDuringReadSaves(t T, env *Env) {
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
	src := &cancelOnReadSource{LogSource: consumer.EventStore(s, adv), cancel: stop}
	clock := newFakeClock()
	r, err := consumer.NewRunner(ctx, reg, consumer.Options{Type: "projection", Name: "stop-mid-read", Transactional: true,
		PollInterval: 20 * time.Millisecond, Metrics: rec, Now: clock.Now,

		Routes: []consumer.Route{consumer.On(src, func(ctx context.Context, tx *sql.Tx, m consumer.Msg[eventstore.Recorded]) error {
			return insertApplied(ctx, tx, m.Position)
		})}})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	var last int64
	for i := range 6 {
		a, err := s.Append(ctx, eventstore.Stream{AggregateType: "test.Account", AggregateID: fmt.Sprintf("lag-%d", i%2),
			Events: []eventstore.Event{ev("test.E", `{}`)}})
		if err != nil {
			t.Fatal(err)
		}
		last = max(last, a.Positions[len(a.Positions)-1])
	}
	waitFor(t, "6 applies", func() bool { return len(appliedCounts(t, env)) == 6 })
	waitFor(t, "every partition read up to the mark (last reported lag 0)", func() bool {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		if len(rec.last) != 16 {
			return false
		}
		for _, lag := range rec.last {
			if lag != 0 {
				return false
			}
		}
		return true
	})
	src.mu.Lock()
	src.armed, src.past = true, last
	src.mu.Unlock()
	if _, err := s.Append(context.Background(), eventstore.Stream{AggregateType: "test.Account", AggregateID: "lag-0",
		Events: []eventstore.Event{ev("test.E", `{}`)}}); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("run: %v", err)
		}
	case <-testtime.After(2 * time.Minute):
		t.Fatalf("the runner did not stop after the cancelled read (armed read never called: %v)", src.isArmed())
	}
	st, err := reg.Operator().Status(context.Background(), consumer.Ref{Type: "projection", Name: "stop-mid-read"})
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Partitions) != 16 {
		t.Fatalf("status shows %d partitions, want 16", len(st.Partitions))
	}
	var short []string
	for _, p := range st.Partitions {
		if p.Checkpoint == nil || *p.Checkpoint < last {
			short = append(short, fmt.Sprintf("%d at %s", p.Partition, fmtPtr(p.Checkpoint)))
		}
	}
	if len(short) > 0 {
		t.Errorf("after the stop, %d partitions' checkpoints are below %d, where every partition was read up to before the cancelled read: %v",
			len(short), last, short)
	}
	if n := len(appliedCounts(t, env)); n != 6 {
		t.Errorf("%d applies, want 6 (the 7th event was never read)", n)
	}
}

func (s *cancelOnReadSource) isArmed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.armed
}

func fmtPtr(p *int64) string {
	if p == nil {
		return "none"
	}
	return fmt.Sprint(*p)
}
