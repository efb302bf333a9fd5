package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"time"

	"github.com/tidemarkdb/tidemark/core/consumer"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/eventstore"
	"github.com/tidemarkdb/tidemark/core/projection"
	"github.com/tidemarkdb/tidemark/core/schema"
)

// demoSummaryName is the demo projection's name (and query table).
const demoSummaryName = "demo-account-summary"

// demoSummary is the demo projection's read model.
type demoSummary struct {
	Owner        string `json:"owner,omitempty"`
	BalanceCents int64  `json:"balance_cents"`
	Movements    int    `json:"movements"`
}

type demoAmount struct {
	Amount float64 `json:"amount"`
}

// demoProjection declares the demo's account summary: one read model per
// account, its balance a query column a finder ranges over (the
// returned handle).
func demoProjection() (*projection.Projection[demoSummary], projection.Column[demoSummary, string]) {
	p := projection.New[demoSummary](demoSummaryName, nil)
	projection.OnType(p, "AccountOpened", func(e projection.Event[struct {
		Owner string `json:"owner"`
	}], s *demoSummary) error {
		s.Owner = e.Value.Owner
		return nil
	})
	move := func(sign int64) func(projection.Event[demoAmount], *demoSummary) error {
		return func(e projection.Event[demoAmount], s *demoSummary) error {
			s.BalanceCents += sign * int64(math.Round(e.Value.Amount*100))
			s.Movements++
			return nil
		}
	}
	projection.OnType(p, "MoneyDeposited", move(1))
	projection.OnType(p, "MoneyWithdrawn", move(-1))
	balance := projection.Field(p, "balance", projection.Decimal, func(s *demoSummary) string { return money(s.BalanceCents) },
		projection.Digits(15, 2))
	return p, balance
}

// demoQueryTables is the demo projection's query table, declared with the
// engine.
func demoQueryTables() []schema.QueryTable {
	p, _ := demoProjection()
	return []schema.QueryTable{p.QueryTable()}
}

// runProjectionDemo runs the account summary over every event so far,
// then reads one read model and ranges over balances with a finder.
func runProjectionDemo(ctx context.Context, out io.Writer, e *engine.Engine, store *eventstore.Store) error {
	reg := consumer.NewRegistry(e, nil)
	// A demo run starts the projection over: its consumer goes (before Open,
	// which creates its row), however far an earlier run got.
	if _, err := reg.Operator().Unsubscribe(ctx, consumer.Ref{Type: projection.ConsumerType, Name: demoSummaryName}, engine.EventStoreTopic); err != nil &&
		!errors.Is(err, consumer.ErrNotFound) && !errors.Is(err, consumer.ErrNotSubscribed) {
		return err
	}
	p, balance := demoProjection()
	st, err := projection.Open(ctx, e, p)
	if err != nil {
		return err
	}
	opts, err := st.Options(consumer.EventStore(store, nil))
	if err != nil {
		return err
	}
	opts.Workers, opts.Logger = 1, slog.New(slog.DiscardHandler)
	r, err := consumer.NewRunner(ctx, reg, opts)
	if err != nil {
		return err
	}
	start, applied := time.Now(), 0
	for {
		n, err := r.Poll(ctx)
		if err != nil {
			return err
		}
		if n == 0 {
			break
		}
		applied += n
	}
	fmt.Fprintf(out, "\nprojection %s: %d events applied in %s (each state a message on its read-model topic, the balance a query column of %s)\n",
		demoSummaryName, applied, time.Since(start).Round(time.Millisecond), st.Table())
	if s, ok, err := st.Get(ctx, "acc-1"); err != nil {
		return err
	} else if ok {
		fmt.Fprintf(out, "projection Get(acc-1): owner %q, balance %s, %d movements\n", s.Owner, money(s.BalanceCents), s.Movements)
	}
	page, err := st.Find(ctx, projection.Query{Where: []projection.Cond{balance.Ge("0")}, OrderBy: balance.Name(), Desc: true, Limit: 3})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "projection Find(balance ≥ 0, by balance, descending, first 3):")
	for _, it := range page.Items {
		fmt.Fprintf(out, "  %s %s", it.Key, money(it.Value.BalanceCents))
	}
	fmt.Fprintln(out)
	return nil
}
