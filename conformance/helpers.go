package conformance

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/eventstore"
	"github.com/tidemarkdb/tidemark/core/hwm"
	"github.com/tidemarkdb/tidemark/core/schema"
	"github.com/tidemarkdb/tidemark/internal/testtime"
)

// testAggregates are declared by every engine the suite opens: one on the
// shared table, one on its own table, two grouped on one table.
var testAggregates = []schema.Aggregate{
	{Namespace: "bank", Name: "Account"},
	{Namespace: "bank", Name: "BankAccount", OwnTable: true},
	{Namespace: "payments", Name: "Payment", EventTable: "PAYMENTS_EVENTS"},
	{Namespace: "payments", Name: "Refund", EventTable: "PAYMENTS_EVENTS"},
}

// testQueryTable is the fixture query table's shape; its decimal's
// precision is set per engine (Features.fixtureQueryTable).
var testQueryTable = schema.QueryTable{Projection: "account-summary", Fields: []schema.QueryField{
	{Column: "iban", Kind: dialect.KindText, Unique: true},
	{Column: "balance", Kind: dialect.KindDecimal, Precision: 38, Scale: 10},
	{Column: "opened_on", Kind: dialect.KindDate},
	{Column: "opened_at", Kind: dialect.KindInstant},
	{Column: "active", Kind: dialect.KindBoolean},
	{Column: "rank_no", Kind: dialect.KindInteger},
}}

// defaultConfig is the suite's configuration on env's engine: the test
// aggregates and the fixture query table at the engine's widest decimal.
func defaultConfig(env *Env) engine.Config {
	return engine.Config{
		Names:       schema.Config{Aggregates: testAggregates},
		QueryTables: []schema.QueryTable{env.Features.fixtureQueryTable()},
		Partitions:  8,
	}
}

func openEngine(t T, env *Env, cfg engine.Config) *engine.Engine {
	t.Helper()
	if !onPrepared(env, cfg) {
		t.Fatalf("this test opens a configuration other than the prepared schema's on a copy of it: add its area to freshAreas")
	}
	ctx, cancel := testtime.Context(context.Background(), 2*time.Minute)
	defer cancel()
	start := time.Now()
	e, err := engine.Open(ctx, env.DB, env.Catalogue, cfg)
	env.setup.firstOpen(time.Since(start))
	if err != nil {
		t.Fatalf("engine.Open: %v", err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

func openStore(t T, env *Env) (*eventstore.Store, *engine.Engine) {
	e := openEngine(t, env, defaultConfig(env))
	return eventstore.New(e, nil), e
}

var (
	advMu     sync.Mutex
	advancers = map[*engine.Engine]*hwm.Advancer{}
)

// advancerOf is one advancer per engine, so a test's publishes do not wait
// for each other's leases to expire.
func advancerOf(e *engine.Engine) *hwm.Advancer {
	advMu.Lock()
	defer advMu.Unlock()
	a, ok := advancers[e]
	if !ok {
		a = hwm.New(e, hwm.Options{})
		advancers[e] = a
	}
	return a
}

// advanceUntil cycles an advancer until the mark reaches want or the bound
// runs out (a guard against hanging, not a timed assertion).
func advanceUntil(ctx context.Context, a *hwm.Advancer, s *eventstore.Store, want int64) (int64, error) {
	const bound = 30 * time.Second
	deadline := testtime.Deadline(bound)
	for {
		if _, err := a.Cycle(ctx); err != nil {
			return 0, err
		}
		m, err := s.Mark(ctx)
		if err != nil {
			return 0, err
		}
		if m >= want {
			return m, nil
		}
		if time.Now().After(deadline) {
			return m, fmt.Errorf("mark stuck at %d, want %d: gave up after %s (the advancer: mark %d, oldest holder %+v)", m, want, testtime.Describe(bound), a.Mark(), oldestHolder(a))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func ev(typ, payload string) eventstore.Event {
	return eventstore.Event{Type: typ, Payload: []byte(payload)}
}

func isCounter(env *Env) bool { return env.Catalogue.Positions == dialect.CounterRow }

func expectErr[E error](t T, err error, what string) E {
	t.Helper()
	var target E
	if !errors.As(err, &target) {
		t.Fatalf("%s: want %T, got %v", what, target, err)
	}
	return target
}

func contains(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

// oldestHolder is the advancer's oldest horizon holder, for reports.
func oldestHolder(a *hwm.Advancer) any {
	if h, ok := a.OldestHolder(); ok {
		return h
	}
	return "none"
}
