package projection_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/projection"
	"github.com/tidemarkdb/tidemark/core/schema"
	"github.com/tidemarkdb/tidemark/internal/sqlitetest"
)

// acct is the read model of the typed handles' tests: a field of every
// kind, iban unique.
type acct struct {
	IBAN    *string
	Owner   string
	Balance string
	At      time.Time
	Active  bool
	Rank    int64
}

type acctFields struct {
	iban    projection.UniqueColumn[acct, *string]
	owner   projection.Column[acct, string]
	balance projection.Column[acct, string]
	day     projection.Column[acct, time.Time]
	clock   projection.Column[acct, time.Time]
	at      projection.Column[acct, time.Time]
	active  projection.Column[acct, bool]
	rank    projection.Column[acct, int64]
}

func acctProjection(name string) (*projection.Projection[acct], acctFields) {
	p := projection.New[acct](name, nil)
	projection.OnType(p, "Opened", func(projection.Event[struct{}], *acct) error { return nil })
	at := func(s *acct) time.Time { return s.At }
	return p, acctFields{
		iban:    projection.UniqueField(p, "iban", projection.Text, func(s *acct) *string { return s.IBAN }),
		owner:   projection.Field(p, "owner", projection.Text, func(s *acct) string { return s.Owner }),
		balance: projection.Field(p, "balance", projection.Decimal, func(s *acct) string { return s.Balance }, projection.Digits(10, 2)),
		day:     projection.Field(p, "opened_on", projection.Date, at),
		clock:   projection.Field(p, "opened_time", projection.Time, at),
		at:      projection.Field(p, "opened_at", projection.Instant, at),
		active:  projection.Field(p, "active", projection.Boolean, func(s *acct) bool { return s.Active }),
		rank:    projection.Field(p, "rank_no", projection.Integer, func(s *acct) int64 { return s.Rank }),
	}
}

// openAccts opens the stores of two projections declaring the same
// columns, "acct" and "other".
func openAccts(t *testing.T) (*engine.Engine, *projection.Store[acct], acctFields, *projection.Store[acct], acctFields) {
	t.Helper()
	p, f := acctProjection("acct")
	q, g := acctProjection("other")
	e := sqlitetest.EngineConfig(t, engine.Config{QueryTables: []schema.QueryTable{p.QueryTable(), q.QueryTable()}})
	st, err := projection.Open(context.Background(), e, p)
	if err != nil {
		t.Fatal(err)
	}
	other, err := projection.Open(context.Background(), e, q)
	if err != nil {
		t.Fatal(err)
	}
	return e, st, f, other, g
}

// TestColumnHandle: a handle carries its projection and column.
func TestColumnHandle(t *testing.T) {
	_, f := acctProjection("acct")
	if f.balance.Name() != "balance" || f.balance.Projection() != "acct" || f.iban.Name() != "iban" || f.iban.String() != "acct.iban" {
		t.Errorf("handles: %q of %q, %q (%s)", f.balance.Name(), f.balance.Projection(), f.iban.Name(), f.iban.String())
	}
	p, _ := acctProjection("acct")
	if qt := p.QueryTable(); !qt.Fields[0].Unique || qt.Fields[1].Unique {
		t.Errorf("UniqueField declares a unique field, Field does not: %+v", qt.Fields)
	}
}

// TestTypedCondsBindAsNamed: a typed handle's condition runs the
// statement, with the same converted arguments, as the any-typed
// condition on its column (a time cut as its kind binds it, a decimal
// rounded to its scale).
func TestTypedCondsBindAsNamed(t *testing.T) {
	_, st, f, _, _ := openAccts(t)
	ts := time.Date(2026, 3, 4, 5, 6, 7, 123456789, time.FixedZone("x", 3600))
	iban := "DE01"
	cases := []struct{ typed, named projection.Cond }{
		{f.iban.Eq(&iban), projection.Eq("iban", "DE01")},
		{f.owner.Ne("ann"), projection.Ne("owner", "ann")},
		{f.balance.Ge("10.755"), projection.Ge("balance", "10.76")},
		{f.day.Eq(ts), projection.Eq("opened_on", ts.Add(time.Hour))}, // the same date in UTC
		{f.clock.Lt(ts), projection.Lt("opened_time", ts)},
		{f.at.Le(ts), projection.Le("opened_at", ts.UTC().Truncate(time.Microsecond))},
		{f.active.Eq(true), projection.Eq("active", true)},
		{f.rank.Gt(3), projection.Gt("rank_no", 3)},
		{f.rank.In(1, 2), projection.In("rank_no", 1, 2)},
		{f.rank.In(), projection.In("rank_no")},
		{f.iban.IsNull(), projection.IsNull("iban")},
		{f.owner.NotNull(), projection.NotNull("owner")},
	}
	for _, c := range cases {
		typed, err := st.Statements(projection.Query{Where: []projection.Cond{c.typed}, OrderBy: f.rank.Name()})
		if err != nil {
			t.Errorf("%+v: %v", c.typed, err)
			continue
		}
		named, err := st.Statements(projection.Query{Where: []projection.Cond{c.named}, OrderBy: "rank_no"})
		if err != nil {
			t.Fatalf("%+v: %v", c.named, err)
		}
		if fmt.Sprint(typed) != fmt.Sprint(named) {
			t.Errorf("typed %+v:\n%v\nwant %v", c.typed, typed, named)
		}
	}
	var ve *projection.ValueError
	if _, err := st.Count(context.Background(), f.iban.Eq(nil)); !errors.As(err, &ve) || ve.Column != "iban" {
		t.Errorf("Eq(nil pointer): %v, want a *ValueError (use IsNull)", err)
	}
	if _, err := st.Count(context.Background(), f.balance.Eq("123456789")); !errors.As(err, &ve) {
		t.Errorf("a decimal beyond DECIMAL(10,2): %v, want a *ValueError", err)
	}
	var zero projection.Column[acct, int64]
	if _, err := st.Count(context.Background(), zero.Eq(1)); !errors.Is(err, projection.ErrUnknownColumn) {
		t.Errorf("the zero Column: %v, want ErrUnknownColumn", err)
	}
}

// TestForeignHandleRefused: a handle of projection "other" on acct's
// store is refused with a *ForeignColumnError, by every finder, although
// acct declares a column of that name and type.
func TestForeignHandleRefused(t *testing.T) {
	e, st, _, other, g := openAccts(t)
	ctx := context.Background()
	for _, table := range []string{st.Table(), other.Table()} {
		if _, err := e.DB.ExecContext(ctx, "INSERT INTO "+table+" (read_model_id, message_id, iban, rank_no) VALUES ('k-1', 'm-1', 'DE01', 1)"); err != nil {
			t.Fatal(err)
		}
	}
	check := func(what string, err error) {
		t.Helper()
		var fe *projection.ForeignColumnError
		if !errors.As(err, &fe) || fe.Store != "acct" || fe.Projection != "other" || fe.Column != "rank_no" && fe.Column != "iban" ||
			!errors.Is(err, projection.ErrForeignColumn) || !errors.Is(err, projection.ErrUnknownColumn) {
			t.Errorf("%s with other's handle on acct's store: %v, want a *ForeignColumnError (ErrForeignColumn, ErrUnknownColumn)", what, err)
		}
	}
	_, err := st.Find(ctx, projection.Query{Where: []projection.Cond{g.rank.Eq(1)}})
	check("Find", err)
	_, err = st.Count(ctx, g.rank.Ge(0))
	check("Count", err)
	_, err = st.Statements(projection.Query{Where: []projection.Cond{g.rank.IsNull()}})
	check("Statements", err)
	iban := "DE01"
	_, _, err = projection.FindBy(ctx, st, g.iban, &iban)
	check("FindBy", err)
	// Its own store finds with it.
	if it, ok, err := projection.FindBy(ctx, other, g.iban, &iban); err != nil || !ok || it.Key != "k-1" {
		t.Errorf("FindBy on its own store: %+v, %v, %v; want k-1", it, ok, err)
	}
	if n, err := other.Count(ctx, g.rank.Eq(1)); err != nil || n != 1 {
		t.Errorf("Count on its own store: %d, %v; want 1", n, err)
	}
}

// cents is an application type reaching a Decimal column through a
// converter.
type cents int64

type wallet struct{ Amount cents }

// TestTypedHandleOfConvertedType: a handle of a field whose type has a
// converter binds a value through it, as the any-typed condition does.
func TestTypedHandleOfConvertedType(t *testing.T) {
	convs := projection.NewConverters()
	projection.Convert(convs, func(c cents) string { return fmt.Sprintf("%d.%02d", c/100, c%100) })
	p := projection.New[wallet]("wallet", nil, projection.WithConverters(convs))
	projection.OnType(p, "Paid", func(projection.Event[struct{}], *wallet) error { return nil })
	amount := projection.Field(p, "amount", projection.Decimal, func(s *wallet) cents { return s.Amount }, projection.Digits(12, 2))
	e := sqlitetest.EngineConfig(t, engine.Config{QueryTables: []schema.QueryTable{p.QueryTable()}})
	st, err := projection.Open(context.Background(), e, p)
	if err != nil {
		t.Fatal(err)
	}
	typed, err := st.Statements(projection.Query{Where: []projection.Cond{amount.Ge(1234)}})
	if err != nil {
		t.Fatal(err)
	}
	named, err := st.Statements(projection.Query{Where: []projection.Cond{projection.Ge("amount", "12.34")}})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(typed) != fmt.Sprint(named) {
		t.Errorf("amount >= cents(1234): %v, want %v", typed, named)
	}
}
