package conformance

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"time"

	"github.com/tidemarkdb/tidemark/core/consumer"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/eventstore"
)

// deliveryRig is the delivery tests' fixture: a store, a registry on a
// clock the test moves, and a handler whose failures the test scripts.
type deliveryRig struct {
	t       T
	env     *Env
	s       *eventstore.Store
	e       *engine.Engine
	reg     *consumer.Registry
	clock   *fakeClock
	metrics *recMetrics

	mu      sync.Mutex
	fail    map[int64]int   // position → failures still to come (-1: always)
	reason  map[int64]error // the error a failing position returns
	tries   map[int64]int   // handler calls per position
	flaky   map[int64]int   // position → transient failures still to come
	applied []consumer.Msg[eventstore.Recorded]
}

// transientErr is an error the runner classes as transient (the database
// undid the attempt), as sqlerr's classified deadlocks are.
type transientErr struct{}

func (transientErr) Error() string   { return "simulated deadlock" }
func (transientErr) Transient() bool { return true }

func newDeliveryRig(t T, env *Env) *deliveryRig {
	s, e := openStore(t, env)
	createApplied(t, env)
	clock := newFakeClock()
	return &deliveryRig{t: t, env: env, s: s, e: e, reg: consumer.NewRegistry(e, clock.Now), clock: clock,
		metrics: &recMetrics{}, fail: map[int64]int{}, reason: map[int64]error{}, tries: map[int64]int{}, flaky: map[int64]int{}}
}

// handler applies a message unless the script says it fails; in a
// Transactional runner it also writes the position in tx.
func (g *deliveryRig) handler(ctx context.Context, tx *sql.Tx, m consumer.Msg[eventstore.Recorded]) error {
	g.mu.Lock()
	g.tries[m.Position]++
	if g.flaky[m.Position] > 0 {
		g.flaky[m.Position]--
		g.mu.Unlock()
		return transientErr{}
	}
	if n := g.fail[m.Position]; n != 0 {
		if n > 0 {
			g.fail[m.Position]--
		}
		err := g.reason[m.Position]
		g.mu.Unlock()
		if err == nil {
			err = fmt.Errorf("poison at %d", m.Position)
		}
		return err
	}
	g.mu.Unlock()
	if tx != nil {
		if err := insertApplied(ctx, tx, m.Position); err != nil {
			return err
		}
	}
	g.mu.Lock()
	g.applied = append(g.applied, m)
	g.mu.Unlock()
	return nil
}

func (g *deliveryRig) failing(pos int64, times int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.fail[pos] = times
}

func (g *deliveryRig) triesOf(pos int64) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.tries[pos]
}

// order returns the applied positions of key, in apply order.
func (g *deliveryRig) order(key string) []int64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []int64
	for _, m := range g.applied {
		if m.Key == key {
			out = append(out, m.Position)
		}
	}
	return out
}

func (g *deliveryRig) appliedOf(pos int64) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := 0
	for _, m := range g.applied {
		if m.Position == pos {
			n++
		}
	}
	return n
}

// add appends one event of aggregate id and publishes it.
func (g *deliveryRig) add(id, payload string) int64 {
	g.t.Helper()
	res := appendAndPublish(g.t, g.s, g.e, eventstore.Stream{AggregateType: "test.Account", AggregateID: id, Events: []eventstore.Event{ev("test.E", payload)}})
	return res.Positions[0]
}

func (g *deliveryRig) runner(name string, transactional bool, retry consumer.RetryPolicy, policy consumer.ErrorPolicy) *consumer.Runner {
	g.t.Helper()
	return g.runnerOn(g.reg, g.s, name, transactional, retry, policy)
}

func (g *deliveryRig) runnerOn(reg *consumer.Registry, s *eventstore.Store, name string, transactional bool, retry consumer.RetryPolicy, policy consumer.ErrorPolicy) *consumer.Runner {
	g.t.Helper()
	r, err := consumer.NewRunner(context.Background(), reg, consumer.Options{Type: "projection", Name: name, Transactional: transactional,
		Routes: []consumer.Route{consumer.On(consumer.EventStore(s, nil), g.handler)}, Retry: retry, OnError: policy, Metrics: g.metrics})
	if err != nil {
		g.t.Fatalf("runner %s: %v", name, err)
	}
	return r
}

func (g *deliveryRig) poll(r *consumer.Runner) {
	g.t.Helper()
	if _, err := r.Poll(context.Background()); err != nil {
		g.t.Fatalf("poll: %v", err)
	}
}

// rows returns the consumer's undelivered rows by position.
func (g *deliveryRig) rows(id string) map[int64]consumer.UndeliveredRow {
	g.t.Helper()
	rs, err := g.reg.UndeliveredRows(context.Background(), id)
	if err != nil {
		g.t.Fatalf("undelivered rows: %v", err)
	}
	out := map[int64]consumer.UndeliveredRow{}
	for _, u := range rs {
		out[u.Position] = u
	}
	return out
}

// wantRow checks the row at pos has status and count (and, for FAILED,
// next_retry_at at). A nil status wants no row.
func (g *deliveryRig) wantRow(id string, pos int64, status consumer.DeliveryStatus, count int, at time.Time) {
	g.t.Helper()
	u, ok := g.rows(id)[pos]
	switch {
	case status == "" && ok:
		g.t.Errorf("position %d: row %s count %d, want none", pos, u.Status, u.FailureCount)
	case status == "":
	case !ok:
		g.t.Errorf("position %d: no undelivered row, want %s count %d", pos, status, count)
	case u.Status != status || u.FailureCount != count || !u.NextRetryAt.Equal(at):
		g.t.Errorf("position %d: row %s count %d next_retry_at %v, want %s count %d next_retry_at %v",
			pos, u.Status, u.FailureCount, u.NextRetryAt, status, count, at)
	}
}

// exact is a retry policy without jitter: backoffs of Initial × 2^(n-1).
func exact(attempts int) consumer.RetryPolicy {
	return consumer.RetryPolicy{MaxAttempts: attempts, Initial: time.Second, Max: time.Minute, Multiplier: 2, NoJitter: true}
}

// recMetrics records the runner's metrics calls.
type recMetrics struct {
	mu           sync.Mutex
	applied      int
	retried      map[bool]int
	deadLettered map[consumer.DeliveryStatus]int
	halted       map[consumer.HaltReason]int
	lagged       int
}

func (m *recMetrics) Lag(consumer.Consumer, string, int, int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.lagged++
}

func (m *recMetrics) Applied(consumer.Consumer, string, time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.applied++
}

func (m *recMetrics) Retried(_ consumer.Consumer, _ string, transient bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.retried == nil {
		m.retried = map[bool]int{}
	}
	m.retried[transient]++
}

func (m *recMetrics) DeadLettered(_ consumer.Consumer, _ string, s consumer.DeliveryStatus) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.deadLettered == nil {
		m.deadLettered = map[consumer.DeliveryStatus]int{}
	}
	m.deadLettered[s]++
}

func (m *recMetrics) Halted(_ consumer.Consumer, r consumer.HaltReason) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.halted == nil {
		m.halted = map[consumer.HaltReason]int{}
	}
	m.halted[r]++
}

// reset forgets the handler's script and history (a new consumer reads
// the same events).
func (g *deliveryRig) reset() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.fail, g.reason, g.tries, g.flaky, g.applied = map[int64]int{}, map[int64]error{}, map[int64]int{}, map[int64]int{}, nil
}

// covered checks every checkpoint of the consumer reached the mark.
func (g *deliveryRig) covered(id string) {
	g.t.Helper()
	mark, err := g.s.Mark(context.Background())
	if err != nil {
		g.t.Fatal(err)
	}
	evs, err := g.s.ReadAll(context.Background(), 0, 10000)
	if err != nil {
		g.t.Fatal(err)
	}
	part := map[int64]int{}
	var positions []int64
	for _, ev := range evs {
		if ev.GlobalPosition <= mark {
			part[ev.GlobalPosition] = ev.PartitionKey
			positions = append(positions, ev.GlobalPosition)
		}
	}
	checkpointsCover(g.t, g.reg, id, positions, part)
}
