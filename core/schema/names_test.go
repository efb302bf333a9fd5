package schema

import (
	"errors"
	"strings"
	"testing"

	"github.com/tidemarkdb/tidemark/core/dialect"
)

func TestScreamingSnake(t *testing.T) {
	for in, want := range map[string]string{
		"BankAccount": "BANK_ACCOUNT", "Account": "ACCOUNT", "HTTPServer": "HTTP_SERVER",
		"order-line": "ORDER_LINE", "V2Account": "V2_ACCOUNT", "already_SNAKE": "ALREADY_SNAKE",
	} {
		if got := ScreamingSnake(in); got != want {
			t.Errorf("ScreamingSnake(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestQueryTableName(t *testing.T) {
	for in, want := range map[string]string{"account-summary": "account_summary", "a.b c": "a_b_c", "Ω-x": "__x"} {
		if got := QueryTableName(in); got != want {
			t.Errorf("QueryTableName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestValidateIdentifier(t *testing.T) {
	cases := []struct {
		name string
		ok   bool
	}{
		{"EVENT_STORE", true}, {"_x", false}, {"_EVENTS", false}, {"x_", true}, {"a" + strings.Repeat("b", 62), true},
		{"a" + strings.Repeat("b", 63), false}, {"", false}, {"1a", false}, {"a-b", false},
		{"a b", false}, {`a"b`, false}, {"a;DROP", false}, {"ä", false},
	}
	for _, c := range cases {
		err := ValidateIdentifier(c.name, "test")
		if (err == nil) != c.ok {
			t.Errorf("%q: err=%v, want ok=%v", c.name, err, c.ok)
		}
		if err != nil && !errors.Is(err, ErrInvalidIdentifier) {
			t.Errorf("%q: error does not wrap ErrInvalidIdentifier", c.name)
		}
	}
}

// TestResolveRefusesUnderivableAggregate: an aggregate name of only
// punctuation derives no table name (it was "_EVENTS", which HSQLDB
// refuses after the shared tables exist): refused by Resolve, before any
// SQL, naming the aggregate.
func TestResolveRefusesUnderivableAggregate(t *testing.T) {
	for _, a := range []Aggregate{{Namespace: "x", Name: "!!!", OwnTable: true}, {Namespace: "x", Name: "---", EventTable: "X_EVENTS"}} {
		_, err := Resolve(Config{Aggregates: []Aggregate{a}})
		if !errors.Is(err, ErrInvalidIdentifier) || !strings.Contains(err.Error(), "aggregate "+a.Type()) {
			t.Errorf("%+v: %v, want an invalid identifier naming the aggregate", a, err)
		}
	}
	if _, err := Resolve(Config{Aggregates: []Aggregate{{Namespace: "x", Name: "!!!", EventTable: "X_EVENTS", SnapshotTable: "X_SNAPS"}}}); err != nil {
		t.Errorf("explicit tables: %v", err)
	}
}

func TestResolve(t *testing.T) {
	n, err := Resolve(Config{
		Prefixes:   map[dialect.Area]string{dialect.AreaEventSourcing: "ACME_", dialect.AreaMessaging: "M_"},
		TableNames: map[string]string{"consumers_table": "CONS"},
		Aggregates: []Aggregate{
			{Namespace: "bank", Name: "BankAccount", OwnTable: true},
			{Namespace: "pay", Name: "Payment", EventTable: "PAYMENTS_EVENTS"},
			{Namespace: "pay", Name: "Refund", EventTable: "PAYMENTS_EVENTS", SnapshotTable: "REFUND_SNAPS"},
			{Namespace: "bank", Name: "Plain"},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]AggregateTables{
		"bank.BankAccount": {"ACME_BANK_ACCOUNT_EVENTS", "ACME_BANK_ACCOUNT_SNAPSHOTS"},
		"pay.Payment":      {"PAYMENTS_EVENTS", "ACME_PAYMENT_SNAPSHOTS"},
		"pay.Refund":       {"PAYMENTS_EVENTS", "REFUND_SNAPS"},
		"bank.Plain":       {"ACME_EVENT_STORE", "ACME_AGGREGATE_SNAPSHOTS"},
	}
	for typ, w := range want {
		if got := n.ByAggregate[typ]; got != w {
			t.Errorf("%s: %+v, want %+v", typ, got, w)
		}
	}
	if n.Shared["consumers_table"] != "M_CONS" || n.Shared["event_publication_metadata_table"] != "EVENT_PUBLICATION_METADATA" {
		t.Errorf("shared names: %v", n.Shared)
	}
	if strings.Join(n.EventTables, ",") != "ACME_BANK_ACCOUNT_EVENTS,ACME_EVENT_STORE,PAYMENTS_EVENTS" {
		t.Errorf("event tables: %v", n.EventTables)
	}
	if _, err := Resolve(Config{TableNames: map[string]string{"no_such_table": "X"}}); err == nil {
		t.Errorf("unknown override accepted")
	}
}

func TestLengthCheckNeverTruncates(t *testing.T) {
	cat := &dialect.Catalogue{Identity: dialect.Identity{Name: "x", MaxIdentifierLength: 20}}
	_, err := fill(cat, "CREATE INDEX idx_${event_store_table}_partition ON ${event_store_table} (a)", map[string]string{"event_store_table": "ABCDEFGHIJ"})
	var tl *NameTooLongError
	if !errors.As(err, &tl) || tl.Derived != "idx_ABCDEFGHIJ_partition" || tl.Limit != 20 {
		t.Fatalf("want NameTooLongError for the derived index, got %v", err)
	}
}
