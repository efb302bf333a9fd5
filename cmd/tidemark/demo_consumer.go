package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tidemarkdb/tidemark/core/consumer"
	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/eventstore"
	"github.com/tidemarkdb/tidemark/core/hwm"
)

// demoBalanceTable is the consumer demo's read model: the user's own table,
// so plain portable DDL rather than catalogue statements (the docs'
// consumer example writes its read model the same way).
const demoBalanceTable = "DEMO_ACCOUNT_BALANCES"

// demoRef is the demo's consumer.
var demoRef = consumer.Ref{Type: "projection", Name: "account-balances"}

// demoClock is the application clock the demo drives, so retries come due
// without sleeping.
type demoClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *demoClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *demoClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// demoBalances is the projection: balances in cents per account, refusing a
// withdrawal that would take an account below its overdraft limit.
type demoBalances struct {
	e         *engine.Engine
	mu        sync.Mutex
	overdraft map[string]int64 // cents an account may go below zero
	calls     []int64          // positions the handler was called with
}

func (b *demoBalances) bind(n int) string {
	switch b.e.Cat.Identity.Placeholder {
	case dialect.PlaceholderDollar:
		return fmt.Sprintf("$%d", n)
	case dialect.PlaceholderAtP:
		return fmt.Sprintf("@p%d", n)
	}
	return "?"
}

// takeCalls returns the positions handled since the last call.
func (b *demoBalances) takeCalls() []int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	c := b.calls
	b.calls = nil
	slices.Sort(c)
	return c
}

// handle applies one event in the checkpoint's transaction (Transactional).
func (b *demoBalances) handle(ctx context.Context, tx *sql.Tx, m consumer.Msg[eventstore.Recorded]) error {
	ev := m.Value
	b.mu.Lock()
	b.calls = append(b.calls, m.Position)
	limit := b.overdraft[ev.AggregateID]
	b.mu.Unlock()
	delta, err := demoDelta(ev)
	if err != nil {
		return err
	}
	var cur int64
	err = tx.QueryRowContext(ctx, "SELECT BALANCE FROM "+demoBalanceTable+" WHERE ACCOUNT_KEY = "+b.bind(1), ev.AggregateID).Scan(&cur)
	found := err == nil
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	next := cur + delta
	if next < -limit {
		return fmt.Errorf("account-balances: %s would go to %s, below its overdraft of %s", ev.AggregateID, money(next), money(limit))
	}
	if found {
		_, err = tx.ExecContext(ctx, "UPDATE "+demoBalanceTable+" SET BALANCE = "+b.bind(1)+" WHERE ACCOUNT_KEY = "+b.bind(2), next, ev.AggregateID)
	} else {
		_, err = tx.ExecContext(ctx, "INSERT INTO "+demoBalanceTable+" (ACCOUNT_KEY, BALANCE) VALUES ("+b.bind(1)+", "+b.bind(2)+")", ev.AggregateID, next)
	}
	return err
}

// demoDelta is the event's effect on the balance, in cents.
func demoDelta(ev eventstore.Recorded) (int64, error) {
	var p struct {
		Amount float64 `json:"amount"`
	}
	if err := json.Unmarshal(ev.Payload, &p); err != nil {
		return 0, fmt.Errorf("account-balances: payload of %s: %w", ev.Type, err)
	}
	cents := int64(math.Round(p.Amount * 100))
	switch ev.Type {
	case "MoneyDeposited":
		return cents, nil
	case "MoneyWithdrawn":
		return -cents, nil
	}
	return 0, nil // openings create the row at 0
}

func money(cents int64) string {
	sign := ""
	if cents < 0 {
		sign, cents = "-", -cents
	}
	return fmt.Sprintf("%s%d.%02d", sign, cents/100, cents%100)
}

// demoRun is the state the consumer demo's steps share.
type demoRun struct {
	out   io.Writer
	e     *engine.Engine
	store *eventstore.Store
	adv   *hwm.Advancer
	reg   *consumer.Registry
	clock *demoClock
	b     *demoBalances
}

// runConsumerDemo shows a durable consumer on the demo's engine: a read
// model built in the checkpoint's transaction, a poison event dead-lettered
// after its retries, the operator's retry, and a restart resuming after the
// checkpoint.
func runConsumerDemo(ctx context.Context, out io.Writer, e *engine.Engine, store *eventstore.Store, adv *hwm.Advancer) error {
	d := &demoRun{out: out, e: e, store: store, adv: adv,
		clock: &demoClock{t: time.Now().UTC().Truncate(time.Second)},
		b:     &demoBalances{e: e, overdraft: map[string]int64{"BA-17": 100_00}}}
	d.reg = consumer.NewRegistry(e, d.clock.now)
	if err := d.prepare(ctx); err != nil {
		return err
	}
	r, err := d.runner(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\nconsumer %s reads %s, writes read model %s in the checkpoint's transaction\n"+
		"consumer it refuses a withdrawal below the account's overdraft (BA-17: 100.00, the others none)\n",
		demoRef, engine.EventStoreTopic, demoBalanceTable)
	if err := d.poison(ctx, r); err != nil {
		return err
	}
	if err := d.retry(ctx, r); err != nil {
		return err
	}
	return d.restart(ctx)
}

// prepare empties the read model (creating it the first time) and
// unsubscribes a consumer left by an earlier run on the same database, so
// the projection starts from the first event again.
func (d *demoRun) prepare(ctx context.Context) error {
	var n int64
	if err := d.e.DB.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+demoBalanceTable).Scan(&n); err != nil {
		if _, err := d.e.DB.ExecContext(ctx, "CREATE TABLE "+demoBalanceTable+" (ACCOUNT_KEY VARCHAR(255) NOT NULL PRIMARY KEY, BALANCE BIGINT NOT NULL)"); err != nil {
			return fmt.Errorf("creating the read model %s: %w", demoBalanceTable, err)
		}
		return nil
	}
	if _, err := d.e.DB.ExecContext(ctx, "DELETE FROM "+demoBalanceTable); err != nil {
		return err
	}
	if _, err := d.reg.Operator().Unsubscribe(ctx, demoRef, engine.EventStoreTopic); err != nil && !errors.Is(err, consumer.ErrNotFound) {
		return err
	}
	return nil
}

// runner starts (or restarts) the demo's consumer.
func (d *demoRun) runner(ctx context.Context) (*consumer.Runner, error) {
	return consumer.NewRunner(ctx, d.reg, consumer.Options{
		Type: demoRef.Type, Name: demoRef.Name, Transactional: true,

		Routes: []consumer.Route{consumer.On(consumer.EventStore(d.store, nil), d.b.handle)},
		// One worker: on SQLite a second apply's BEGIN IMMEDIATE would wait
		// for the first's commit, which waits (up to 1 s) for the earlier
		// position: a pause the demo need not show.
		Workers: 1,
		Now:     d.clock.now,
		// Two attempts 1 ms apart: the demo's clock makes the retry due.
		Retry:   consumer.RetryPolicy{MaxAttempts: 2, Initial: time.Millisecond, NoJitter: true},
		OnError: consumer.PolicyDeadLetterKey,
		Logger:  slog.New(slog.DiscardHandler), // the demo prints what happens
	})
}

// appendEvents appends to bank.Account aggregates and moves the mark over them.
func (d *demoRun) appendEvents(ctx context.Context, evs ...[3]string) error {
	for _, s := range evs {
		res, err := d.store.Append(ctx, eventstore.Stream{AggregateType: "bank.Account", AggregateID: s[0],
			Events: []eventstore.Event{{Type: s[1], Payload: []byte(s[2])}}})
		if err != nil {
			return err
		}
		fmt.Fprintf(d.out, "append   %-16s %-6s %-18s %-20s → position %d\n", "bank.Account", s[0], s[1], s[2], res.Positions[0])
	}
	for {
		moved, err := d.adv.Cycle(ctx)
		if err != nil || !moved {
			return err
		}
	}
}

// poll runs one poll and prints what the handler saw.
func (d *demoRun) poll(ctx context.Context, r *consumer.Runner, what string) error {
	n, err := r.Poll(ctx)
	if err != nil {
		return err
	}
	calls := d.b.takeCalls()
	fmt.Fprintf(d.out, "consumer %-38s %d applied, %d handler calls (positions %s)\n", what+":", n, len(calls), positions(calls))
	return nil
}

func positions(ps []int64) string {
	if len(ps) == 0 {
		return "none"
	}
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = fmt.Sprint(p)
	}
	return strings.Join(s, " ")
}

// poison builds the read model from the demo's events and a few more, one
// of them refused: it fails, is retried once when the clock makes it due,
// and becomes a dead letter holding its key while other accounts flow.
func (d *demoRun) poison(ctx context.Context, r *consumer.Runner) error {
	if err := d.appendEvents(ctx,
		[3]string{"acc-2", "AccountOpened", `{"owner":"Grace"}`},
		[3]string{"acc-2", "MoneyDeposited", `{"amount": 75}`},
		[3]string{"acc-1", "MoneyWithdrawn", `{"amount": 20.50}`},
		[3]string{"acc-3", "AccountOpened", `{"owner":"Linus"}`},
		[3]string{"acc-3", "MoneyWithdrawn", `{"amount": 40}`},
		[3]string{"acc-3", "MoneyDeposited", `{"amount": 15}`},
	); err != nil {
		return err
	}
	if err := d.poll(ctx, r, "poll 1"); err != nil {
		return err
	}
	if err := d.printUndelivered(ctx); err != nil {
		return err
	}
	d.clock.advance(time.Second)
	if err := d.poll(ctx, r, "clock +1s, poll 2 (the retry is due)"); err != nil {
		return err
	}
	fmt.Fprintf(d.out, "dead     budget of 2 attempts spent, policy %s: the key's later messages are held behind it\n", consumer.PolicyDeadLetterKey)
	if err := d.printDeadLetters(ctx); err != nil {
		return err
	}
	if err := d.appendEvents(ctx, [3]string{"acc-2", "MoneyDeposited", `{"amount": 5}`}); err != nil {
		return err
	}
	if err := d.poll(ctx, r, "poll 3 (other accounts keep flowing)"); err != nil {
		return err
	}
	return d.printBalances(ctx)
}

// retry is the operator's fix: grant acc-3 an overdraft and retry its dead
// letters; the next poll applies them in order.
func (d *demoRun) retry(ctx context.Context, r *consumer.Runner) error {
	d.b.mu.Lock()
	d.b.overdraft["acc-3"] = 50_00
	d.b.mu.Unlock()
	ch, err := d.reg.Operator().RetryDeadLetters(ctx, demoRef, consumer.ByKey(engine.EventStoreTopic, "bank.Account/acc-3"))
	if err != nil {
		return err
	}
	fmt.Fprintf(d.out, "retry    operator grants acc-3 an overdraft of 50.00 and retries its dead letters: %s\n", ch)
	if err := d.poll(ctx, r, "poll 4"); err != nil {
		return err
	}
	left, err := d.reg.Operator().Undelivered(ctx, demoRef)
	if err != nil {
		return err
	}
	fmt.Fprintf(d.out, "retry    %d undelivered messages left\n", len(left))
	return d.printBalances(ctx)
}

// restart drops the runner, appends more, and starts a new runner for the
// same consumer: it resumes after its checkpoints.
func (d *demoRun) restart(ctx context.Context) error {
	before, err := d.checkpoints(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(d.out, "restart  runner stopped; checkpoints (partition:position) %s\n", before)
	earlier, err := d.store.Mark(ctx) // every event up to here was handled before the restart
	if err != nil {
		return err
	}
	if err := d.appendEvents(ctx,
		[3]string{"acc-1", "MoneyDeposited", `{"amount": 10}`},
		[3]string{"acc-2", "MoneyWithdrawn", `{"amount": 30}`},
	); err != nil {
		return err
	}
	r, err := d.runner(ctx)
	if err != nil {
		return err
	}
	n, err := r.Poll(ctx)
	if err != nil {
		return err
	}
	calls := d.b.takeCalls()
	again := 0
	for _, p := range calls {
		if p <= earlier {
			again++
		}
	}
	fmt.Fprintf(d.out, "restart  new runner, poll: %d applied, %d handler calls (positions %s); %d of the %d earlier events applied again\n",
		n, len(calls), positions(calls), again, earlier)
	after, err := d.checkpoints(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(d.out, "restart  checkpoints %s\n", after)
	return d.printBalances(ctx)
}

// checkpoints lists the recorded event-store checkpoints.
func (d *demoRun) checkpoints(ctx context.Context) (string, error) {
	c, err := d.reg.Lookup(ctx, demoRef.Type, demoRef.Name)
	if err != nil {
		return "", err
	}
	cps, err := d.reg.Checkpoints(ctx, c.ID)
	if err != nil {
		return "", err
	}
	slices.SortFunc(cps, func(a, b consumer.Checkpoint) int { return a.Partition - b.Partition })
	var s []string
	for _, cp := range cps {
		if cp.Recorded {
			s = append(s, fmt.Sprintf("%d:%d", cp.Partition, cp.Position))
		}
	}
	return strings.Join(s, " "), nil
}

// printUndelivered prints the consumer's undelivered rows (any status).
func (d *demoRun) printUndelivered(ctx context.Context) error {
	rows, err := d.reg.Operator().Undelivered(ctx, demoRef)
	if err != nil {
		return err
	}
	for _, u := range rows {
		next := "-"
		if !u.NextRetryAt.IsZero() {
			next = "+" + u.NextRetryAt.Sub(d.clock.now()).String()
		}
		fmt.Fprintf(d.out, "consumer undelivered %-20s position %-3d %-16s failures %d, next retry %s\n", u.Key, u.Position, u.Status, u.FailureCount, next)
	}
	return nil
}

// printDeadLetters prints the dead letters as the operator reads them.
func (d *demoRun) printDeadLetters(ctx context.Context) error {
	rows, err := d.reg.Operator().DeadLetters(ctx, demoRef)
	if err != nil {
		return err
	}
	for _, u := range rows {
		reason := u.FailureReason
		if reason == "" {
			reason = "-"
		}
		fmt.Fprintf(d.out, "dead     %-20s position %-3d partition %-2d %-16s failures %d  %s\n", u.Key, u.Position, u.Partition, u.Status, u.FailureCount, reason)
	}
	return nil
}

// printBalances prints the read model, by account.
func (d *demoRun) printBalances(ctx context.Context) error {
	rows, err := d.e.DB.QueryContext(ctx, "SELECT ACCOUNT_KEY, BALANCE FROM "+demoBalanceTable)
	if err != nil {
		return err
	}
	defer rows.Close()
	var lines []string
	for rows.Next() {
		var (
			key string
			bal int64
		)
		if err := rows.Scan(&key, &bal); err != nil {
			return err
		}
		lines = append(lines, fmt.Sprintf("  %-6s %9s", key, money(bal)))
	}
	if err := rows.Err(); err != nil {
		return err
	}
	slices.Sort(lines)
	fmt.Fprintf(d.out, "consumer read model %s:\n%s\n", demoBalanceTable, strings.Join(lines, "\n"))
	return nil
}
