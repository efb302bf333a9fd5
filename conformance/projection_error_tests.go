package conformance

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/tidemarkdb/tidemark/core/consumer"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/eventstore"
	"github.com/tidemarkdb/tidemark/core/projection"
	"github.com/tidemarkdb/tidemark/core/sqlerr"
)

// projConsumer is the account projection's consumer row.
func (r *projRig) projConsumer(t T) consumer.Consumer {
	t.Helper()
	c, err := consumer.NewRegistry(r.e, nil).Lookup(context.Background(), projection.ConsumerType, "account-summary")
	if err != nil {
		t.Fatalf("Lookup: %v", err)
	}
	return c
}

// waitHalted waits until the projection's consumer halted APPLY_ERROR and
// returns its undelivered rows by key.
func (r *projRig) waitHalted(t T) map[string]consumer.UndeliveredRow {
	t.Helper()
	waitFor(t, "the projection halted APPLY_ERROR", func() bool {
		c := r.projConsumer(t)
		return c.State == consumer.Halted && c.HaltReason == consumer.ApplyError
	})
	return r.undelivered(t)
}

// undelivered is the projection's undelivered rows by key ("type/id").
func (r *projRig) undelivered(t T) map[string]consumer.UndeliveredRow {
	t.Helper()
	rows, err := consumer.NewRegistry(r.e, nil).UndeliveredRows(context.Background(), r.projConsumer(t).ID)
	if err != nil {
		t.Fatalf("UndeliveredRows: %v", err)
	}
	out := map[string]consumer.UndeliveredRow{}
	for _, u := range rows {
		out[u.Key] = u
	}
	return out
}

// applyDirect applies the last stored event of id with the store's handler
// in a transaction it rolls back, and returns the handler's error.
func (r *projRig) applyDirect(t T, typ, id string) error {
	t.Helper()
	ctx := context.Background()
	evs, err := r.s.Load(ctx, typ, id, -1)
	if err != nil || len(evs) == 0 {
		t.Fatalf("Load(%s): %d events, %v", id, len(evs), err)
	}
	tx, err := r.e.DB.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	return r.st.Handler()(ctx, tx, consumer.Msg[eventstore.Recorded]{Value: evs[len(evs)-1], Epoch: r.projConsumer(t).Epoch})
}

// A read model whose unique field's value another read model holds is
// refused with a *projection.UniqueFieldError naming the column, the value
// and the key — on the insert of a new read model and on the update of one
// — and the consumer's error policy records its text.
func testProjectionUniqueViolationTyped(t T, env *Env) {
	r := newProjRig(t, env)
	r.append(t, "bank.Account", "a-1", projOpened{IBAN: "DE-DUP"})
	r.append(t, "bank.Account", "a-3", projOpened{IBAN: "DE-OTHER"})
	r.run(t, func(o *consumer.Options) { o.Retry = consumer.RetryPolicy{MaxAttempts: 1} })
	waitFor(t, "a-1 and a-3 applied", func() bool {
		_, ok1, _ := r.st.Get(context.Background(), "a-1")
		_, ok3, _ := r.st.Get(context.Background(), "a-3")
		return ok1 && ok3
	})
	r.append(t, "bank.Account", "a-2", projOpened{IBAN: "DE-DUP"})
	rows := r.waitHalted(t)
	if _, ok, err := r.st.Get(context.Background(), "a-2"); ok || err != nil {
		t.Errorf("Get(a-2) after the halt: %v, %v; want none", ok, err)
	}
	insert := r.applyDirect(t, "bank.Account", "a-2")
	ue := checkUniqueFieldError(t, "insert of a-2", insert, "a-2", "DE-DUP")
	held, ok := rows["bank.Account/a-2"]
	if !ok || held.Status != consumer.StatusHalted || !strings.Contains(held.FailureReason, ue.Text()) {
		t.Errorf("a-2's undelivered row %+v (found %v); want HALTED with the failure %q", held, ok, ue.Text())
	}
	// An existing read model taking the value: the update is refused alike.
	r.append(t, "bank.Account", "a-3", projOpened{IBAN: "DE-DUP"})
	checkUniqueFieldError(t, "update of a-3", r.applyDirect(t, "bank.Account", "a-3"), "a-3", "DE-DUP")
}

func checkUniqueFieldError(t T, what string, err error, key, value string) *projection.UniqueFieldError {
	t.Helper()
	var ue *projection.UniqueFieldError
	if !errors.As(err, &ue) {
		t.Fatalf("%s: %v (%T); want a *projection.UniqueFieldError", what, err, err)
	}
	if !errors.Is(err, sqlerr.ErrUniqueViolation) {
		t.Errorf("%s: %v is not sqlerr.ErrUniqueViolation", what, err)
	}
	want := []any{value}
	if ue.Projection != "account-summary" || ue.Key != key || !reflect.DeepEqual(ue.Columns, []string{"iban"}) ||
		len(ue.Values) != 1 || fmt.Sprint(ue.Values[0]) != fmt.Sprint(want[0]) {
		t.Errorf("%s: %+v; want projection account-summary, key %s, column iban, value %s", what, ue, key, value)
	}
	return ue
}

// A listener failing on one event meets the projection's error policy:
// with Halt (the default) the consumer halts APPLY_ERROR and the read
// model holds the events before it; with Skip (DEAD_LETTER) the event is
// parked for an operator and the later events of its key and of other
// keys are applied.
func testProjectionListenerErrorHaltAndSkip(t T, env *Env) {
	ctx := context.Background()
	r := newProjRig(t, env)
	dec := env.Features.fixtureQueryTable().Fields[1]
	st, err := projection.Open(ctx, r.e, accountProjectionFailing(dec.Precision, dec.Scale, func(e projDeposited, _ *projAccount) error {
		if e.Amount == "-1" {
			return errors.New("poison deposit")
		}
		return nil
	}))
	if err != nil {
		t.Fatalf("projection.Open: %v", err)
	}
	r.st = st
	r.append(t, "bank.Account", "a-1", projOpened{}, projDeposited{"1"}, projDeposited{"-1"}, projDeposited{"2"})
	stop := r.run(t, func(o *consumer.Options) {
		o.Retry = consumer.RetryPolicy{MaxAttempts: 1}
		if o.OnError != projection.Halt && o.OnError != "" {
			t.Errorf("Options' error policy %q, want Halt (the consumer's default)", o.OnError)
		}
	})
	rows := r.waitHalted(t)
	if got, ok, err := r.st.Get(ctx, "a-1"); !ok || err != nil || got.Deposits != 1 || got.Balance != "1.00" {
		t.Errorf("a-1 after the halt: %+v, %v, %v; want the deposit before the failing one alone", got, ok, err)
	}
	if u := rows["bank.Account/a-1"]; u.Status != consumer.StatusHalted || !strings.Contains(u.FailureReason, "poison deposit") {
		t.Errorf("a-1's undelivered row %+v; want HALTED with the listener's error", u)
	}
	stop()

	ref := consumer.Ref{Type: projection.ConsumerType, Name: "account-summary"}
	if _, err := consumer.NewRegistry(r.e, nil).Operator().Resume(ctx, ref); err != nil {
		t.Fatalf("Resume: %v", err)
	}
	r.append(t, "bank.Account", "b-1", projOpened{}, projDeposited{"5"})
	r.run(t, func(o *consumer.Options) {
		o.Retry, o.OnError = consumer.RetryPolicy{MaxAttempts: 1}, projection.Skip
	})
	if got := r.waitDeposits(t, "a-1", 2); got.Balance != "3.00" {
		t.Errorf("a-1 under Skip: %+v; want both good deposits (3.00)", got)
	}
	r.waitDeposits(t, "b-1", 1)
	if u := r.undelivered(t)["bank.Account/a-1"]; u.Status != consumer.StatusDeadLetter || !strings.Contains(u.FailureReason, "poison deposit") {
		t.Errorf("a-1's undelivered row under Skip %+v; want DEAD_LETTER with the listener's error", u)
	}
}

// projMoney is an application type a converter reduces to a column's.
type projMoney struct{ cents int64 }

// moneyProjection declares the fixture table's fields (so only its
// converters can be refused) with a balance of projMoney.
func moneyProjection(env *Env, convs *projection.Converters) *projection.Projection[projAccount] {
	dec := env.Features.fixtureQueryTable().Fields[1]
	p := projection.New("account-summary", func(string) projAccount { return projAccount{} }, projection.WithConverters(convs))
	projection.On(p, func(projDeposited, *projAccount) error { return nil })
	projection.Field(p, "iban", projection.Text, func(s *projAccount) *string { return s.IBAN }, projection.Unique())
	projection.Field(p, "balance", projection.Decimal, func(*projAccount) projMoney { return projMoney{} }, projection.Digits(dec.Precision, dec.Scale))
	projection.Field(p, "opened_on", projection.Date, openedAt)
	projection.Field(p, "opened_at", projection.Instant, openedAt)
	projection.Field(p, "active", projection.Boolean, func(s *projAccount) bool { return s.Active })
	projection.Field(p, "rank_no", projection.Integer, func(s *projAccount) int64 { return s.Rank })
	return p
}

// refuseConverters: converters that cannot serve their field are refused
// at Open with a *DeclarationError (before any SQL: the caller counts the
// consumers after).
func refuseConverters(t T, env *Env, e *engine.Engine) {
	ctx := context.Background()
	for what, convert := range map[string]func(*projection.Converters){
		"a converter to a type the column cannot hold": func(c *projection.Converters) {
			projection.Convert(c, func(m projMoney) time.Time { return time.Unix(m.cents, 0) })
		},
		"two converters for one type": func(c *projection.Converters) {
			projection.Convert(c, func(m projMoney) string { return fmt.Sprint(m.cents) })
			projection.Convert(c, func(m projMoney) int64 { return m.cents })
		},
	} {
		convs := projection.NewConverters()
		convert(convs)
		_, err := projection.Open(ctx, e, moneyProjection(env, convs))
		var de *projection.DeclarationError
		if !errors.As(err, &de) || !strings.Contains(err.Error(), "converter") {
			t.Errorf("%s: %v, want a *projection.DeclarationError naming the converter", what, err)
		}
	}
}

// Two projections of identical fields on one table, each declared to its
// own engine (as two processes would): the engines' configuration checks
// see one projection each, so the second projection's Open finds the first
// one's read models in the table and is refused, naming both.
func testTwoProjectionsOneTableRefused(t T, env *Env) {
	ctx := context.Background()
	r := newProjRig(t, env)
	r.append(t, "bank.Account", "a-1", projOpened{IBAN: "DE01"})
	r.run(t, nil)
	r.waitDeposits(t, "a-1", 0)
	fixture := env.Features.fixtureQueryTable()
	table := queryTableName(t, fixture)
	dec := fixture.Fields[1]
	twin := accountProjectionAs("account-twin", dec.Precision, dec.Scale, nil, projection.WithTable(table))
	e2 := openEngine(t, env, withQueryTable(env, twin.QueryTable()))
	_, err := projection.Open(ctx, e2, twin)
	var de *projection.DeclarationError
	if !errors.As(err, &de) || !strings.Contains(err.Error(), "account-twin") || !strings.Contains(err.Error(), "account-summary") ||
		!strings.Contains(strings.ToLower(err.Error()), strings.ToLower(table)) {
		t.Fatalf("Open of a second projection on %s: %v; want a *projection.DeclarationError naming both projections and the table", table, err)
	}
	if _, err := projection.Open(ctx, r.e, accountProjection(env)); err != nil {
		t.Errorf("the table's own projection opens again: %v", err)
	}
}
