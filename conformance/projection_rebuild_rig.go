package conformance

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tidemarkdb/tidemark/core/consumer"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/eventstore"
	"github.com/tidemarkdb/tidemark/core/hwm"
	"github.com/tidemarkdb/tidemark/core/projection"
	"github.com/tidemarkdb/tidemark/core/topic"
	"github.com/tidemarkdb/tidemark/internal/testtime"
)

// The rig of the projection/rebuild_* tests (projection_rebuild_tests.go).

// rbTotal is the rebuild tests' read model: a sum per aggregate.
type rbTotal struct {
	Total  int64 `json:"total"`
	Events int   `json:"events"`
}

type rbAdded struct {
	N int64 `json:"n"`
}

const rbName = "rb-totals"

// rbApply is a rebuild test's listener body: the aggregate id, the
// event's n and the read model.
type rbApply func(id string, n int64, s *rbTotal) error

func rbSum(mult int64) rbApply {
	return func(_ string, n int64, s *rbTotal) error {
		s.Total += n * mult
		s.Events++
		return nil
	}
}

// rbProjection declares a sum projection named name with listener fn for
// rbAdded and, when extra is set, more declarations.
func rbProjection(name string, fn rbApply, extra func(*projection.Projection[rbTotal])) *projection.Projection[rbTotal] {
	p := projection.New[rbTotal](name, nil)
	projection.OnType(p, "rbAdded", func(e projection.Event[rbAdded], s *rbTotal) error {
		return fn(e.Recorded.AggregateID, e.Value.N, s)
	})
	projection.Field(p, "total", projection.Integer, func(s *rbTotal) int64 { return s.Total })
	if extra != nil {
		extra(p)
	}
	return p
}

// rbRig is an engine whose config declares the query tables of names, its
// event store and advancer.
type rbRig struct {
	e   *engine.Engine
	s   *eventstore.Store
	adv *hwm.Advancer
	reg *consumer.Registry
}

func newRBRig(t T, env *Env, names ...string) *rbRig {
	cfg := defaultConfig(env)
	for _, n := range names {
		cfg.QueryTables = append(cfg.QueryTables, rbProjection(n, rbSum(1), nil).QueryTable())
	}
	e := openEngine(t, env, cfg)
	ctx, stop := context.WithCancel(context.Background())
	t.Cleanup(stop)
	adv := hwm.New(e, hwm.Options{PollInterval: 10 * time.Millisecond})
	go func() { _ = adv.Run(ctx) }()
	return &rbRig{e: e, s: eventstore.New(e, adv), adv: adv, reg: consumer.NewRegistry(e, nil)}
}

func (r *rbRig) open(t T, p *projection.Projection[rbTotal]) *projection.Store[rbTotal] {
	t.Helper()
	st, err := projection.Open(context.Background(), r.e, p)
	if err != nil {
		t.Fatalf("projection.Open(%s): %v", p.Name(), err)
	}
	return st
}

// options are st's consumer options over the event store, polling and
// saving empty stretches often (a partition without messages reaches a
// replay's end by an empty save).
func (r *rbRig) options(t T, st *projection.Store[rbTotal]) consumer.Options {
	t.Helper()
	opts, err := st.Options(consumer.EventStore(r.s, r.adv))
	if err != nil {
		t.Fatalf("Options: %v", err)
	}
	opts.PollInterval, opts.EmptySaveInterval = 20*time.Millisecond, 10*time.Millisecond
	return opts
}

// run runs opts' consumer until the returned stop is called.
func (r *rbRig) run(t T, opts consumer.Options) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	run, err := consumer.NewRunner(ctx, r.reg, opts)
	if err != nil {
		cancel()
		t.Fatalf("consumer.NewRunner: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- run.Run(ctx) }()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("the projection's runner: %v", err)
		}
	}
	t.Cleanup(stop)
	return stop
}

// add appends an rbAdded of each n to aggregate id and returns the last
// position.
func (r *rbRig) add(t T, id string, ns ...int64) int64 {
	t.Helper()
	var evs []eventstore.Event
	for _, n := range ns {
		evs = append(evs, eventstore.Event{Type: "rbAdded", Payload: []byte(fmt.Sprintf(`{"n":%d}`, n))})
	}
	res, err := r.s.Append(context.Background(), eventstore.Stream{AggregateType: "rb.Counter", AggregateID: id, Events: evs})
	if err != nil {
		t.Fatalf("append to %s: %v", id, err)
	}
	return res.Positions[len(res.Positions)-1]
}

func (r *rbRig) consumer(t T, name string) consumer.Consumer {
	t.Helper()
	c, err := r.reg.Lookup(context.Background(), projection.ConsumerType, name)
	if err != nil {
		t.Fatalf("the consumer of %s: %v", name, err)
	}
	return c
}

// rbModels reads every read model of st through Find's pages.
func rbModels(t T, st *projection.Store[rbTotal]) map[string]rbTotal {
	t.Helper()
	out := map[string]rbTotal{}
	q := projection.Query{Limit: 7}
	for {
		page, err := st.Find(context.Background(), q)
		if err != nil {
			t.Fatalf("Find: %v", err)
		}
		for _, it := range page.Items {
			out[it.Key] = it.Value
		}
		if page.Next.Done() {
			return out
		}
		q.After = page.Next
	}
}

// waitModels waits until st's read models are want.
func waitModels(t T, what string, st *projection.Store[rbTotal], want map[string]rbTotal) {
	t.Helper()
	var got map[string]rbTotal
	waitForOr(t, what, func() bool {
		got = rbModels(t, st)
		return fmt.Sprint(got) == fmt.Sprint(want)
	}, func() string { return fmt.Sprintf("read models %v, want %v", got, want) })
}

func rbCtx(t T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testtime.D(2*time.Minute))
	t.Cleanup(cancel)
	return ctx
}

// truncatedSource is the event store as a source whose history no longer
// starts at the beginning (what capture-topic retention leaves): a read
// from before position 1 finds it deleted.
type truncatedSource struct {
	*consumer.LogSource[eventstore.Recorded]
}

// Read refuses to read from the start.
func (s truncatedSource) Read(ctx context.Context, partition int, after, upto int64, limit int) ([]consumer.Message, error) {
	if after < 1 {
		return nil, &topic.MissingHistoryError{Topic: s.Name(), Position: after, TopicStart: 1}
	}
	return s.LogSource.Read(ctx, partition, after, upto, limit)
}

// ReadMarked is Read's refusal for the runner's marked reads.
func (s truncatedSource) ReadMarked(ctx context.Context, partition int, after, upto int64, limit int) ([]consumer.Message, int64, error) {
	if after < 1 {
		return nil, 0, &topic.MissingHistoryError{Topic: s.Name(), Position: after, TopicStart: 1}
	}
	return s.LogSource.ReadMarked(ctx, partition, after, upto, limit)
}

// ReadRangeMarked is Read's refusal for the runner's range reads.
func (s truncatedSource) ReadRangeMarked(ctx context.Context, after, upto int64, limit int) ([]consumer.Message, int64, error) {
	if after < 1 {
		return nil, 0, &topic.MissingHistoryError{Topic: s.Name(), Position: after, TopicStart: 1}
	}
	return s.LogSource.ReadRangeMarked(ctx, after, upto, limit)
}
