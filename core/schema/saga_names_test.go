package schema

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/tidemarkdb/tidemark/core/dialect"
)

// TestResolveSagaTables: a saga with its own table gets the saga prefix
// before the SCREAMING_SNAKE_CASE of its name (its type after the last
// dot); an explicit table is taken verbatim; an undeclared or shared one
// keeps the shared table.
func TestResolveSagaTables(t *testing.T) {
	n, err := Resolve(Config{
		Prefixes: map[dialect.Area]string{dialect.AreaSaga: "ACME_", dialect.AreaMessaging: "M_"},
		Sagas: []Saga{
			{Type: "bank.TransferSaga", OwnTable: true},
			{Type: "OrderSaga", OwnTable: true},
			{Type: "pay.Refund", Table: "REFUNDS"},
			{Type: "pay.Plain"},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"bank.TransferSaga": "ACME_TRANSFER_SAGA", "OrderSaga": "ACME_ORDER_SAGA",
		"pay.Refund": "REFUNDS", "pay.Plain": "ACME_SAGA_INSTANCES"}
	for typ, table := range want {
		if got := n.BySaga[typ]; got != table {
			t.Errorf("BySaga[%s] = %q, want %q", typ, got, table)
		}
	}
	if wantTables := []string{"ACME_ORDER_SAGA", "ACME_SAGA_INSTANCES", "ACME_TRANSFER_SAGA", "REFUNDS"}; !slices.Equal(n.SagaTables, wantTables) {
		t.Errorf("SagaTables = %v, want %v", n.SagaTables, wantTables)
	}
}

// TestResolveRefusesBadSagaTables: names that cannot be a table, or that
// are another table of the schema, are refused by Resolve, before any SQL,
// naming the saga.
func TestResolveRefusesBadSagaTables(t *testing.T) {
	for _, c := range []struct {
		s    Saga
		want string
	}{
		{Saga{Type: "x.!!!", OwnTable: true}, "saga x.!!!"},
		{Saga{Type: "x.9Lives", OwnTable: true}, "saga x.9Lives"},
		{Saga{Type: "x.Long" + strings.Repeat("a", 60), OwnTable: true}, "saga x.Long"},
		{Saga{Type: "x.Y", Table: "bad name"}, "saga x.Y"},
		{Saga{Type: "x.SagaDeadlines", OwnTable: true}, "${saga_deadlines_table}"},
		{Saga{Type: "x.Y", Table: "EVENT_STORE"}, "event or snapshot table"},
		{Saga{OwnTable: true}, "needs its saga type"},
	} {
		_, err := Resolve(Config{Sagas: []Saga{c.s}})
		var inv *InvalidNameError
		if !errors.As(err, &inv) || !errors.Is(err, ErrInvalidIdentifier) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want an *InvalidNameError mentioning %q", c.s, err, c.want)
		}
	}
	if _, err := Resolve(Config{Sagas: []Saga{{Type: "x.Y", OwnTable: true}, {Type: "x.Y", Table: "OTHER"}}}); err == nil {
		t.Errorf("a saga type declared twice with different tables: no error")
	}
	if _, err := Resolve(Config{Sagas: []Saga{{Type: "x.Y", OwnTable: true}, {Type: "x.Y", Table: "Y"}}}); err != nil {
		t.Errorf("a saga type declared twice with the same table: %v", err)
	}
}
