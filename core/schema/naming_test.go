package schema_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/schema"
	"github.com/tidemarkdb/tidemark/plugins/h2"
	"github.com/tidemarkdb/tidemark/plugins/hsqldb"
	"github.com/tidemarkdb/tidemark/plugins/mysql"
	"github.com/tidemarkdb/tidemark/plugins/postgres"
	"github.com/tidemarkdb/tidemark/plugins/sqlite"
	"github.com/tidemarkdb/tidemark/plugins/sqlserver"
)

var catalogues = map[string]dialect.Catalogue{
	"postgres": postgres.Catalogue(), "mariadb": mysql.Catalogue(mysql.FlavorMariaDB), "mysql": mysql.Catalogue(mysql.FlavorMySQL),
	"sqlite": sqlite.Catalogue(), "h2": h2.Catalogue(), "hsqldb": hsqldb.Catalogue(), "sqlserver": sqlserver.Catalogue(),
}

var query = schema.QueryTable{Projection: "account-summary", Fields: []schema.QueryField{
	{Column: "iban", Kind: dialect.KindText, Unique: true}, {Column: "rank_no", Kind: dialect.KindInteger},
}}

func plan(t *testing.T, cat dialect.Catalogue, cfg schema.Config, queries ...schema.QueryTable) error {
	t.Helper()
	names, err := schema.Resolve(cfg)
	if err != nil {
		return err
	}
	_, err = schema.Plan(&cat, names, queries, cfg.Prefixes[dialect.AreaCQRS])
	return err
}

// Every built-in catalogue plans the usual configuration without conflict:
// aggregates sharing a table, own tables, prefixes, a query table.
func TestPlanAcceptsUsualConfiguration(t *testing.T) {
	cfg := schema.Config{
		Prefixes: map[dialect.Area]string{dialect.AreaMessaging: "ACME_"},
		Aggregates: []schema.Aggregate{
			{Namespace: "bank", Name: "Account"},
			{Namespace: "bank", Name: "Account2", EventTable: "EVENT_STORE"},
			{Namespace: "bank", Name: "BankAccount", OwnTable: true},
			{Namespace: "p", Name: "Payment", EventTable: "PAYMENTS_EVENTS"},
			{Namespace: "p", Name: "Refund", EventTable: "PAYMENTS_EVENTS"},
		},
		SagaTables: []string{"ORDER_SAGAS"},
	}
	for name, cat := range catalogues {
		if err := plan(t, cat, cfg, query); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestPlanRefusesConflicts(t *testing.T) {
	cases := []struct {
		what    string
		cfg     schema.Config
		queries []schema.QueryTable
		// sensitive is the outcome on a catalogue telling tables apart by case.
		want, sensitive error
	}{
		{what: "two spellings of the event table",
			cfg:  schema.Config{Aggregates: []schema.Aggregate{{Name: "L", EventTable: "event_store"}}},
			want: schema.ErrNameConflict},
		{what: "consumer table named like the event table",
			cfg:  schema.Config{TableNames: map[string]string{"consumers_table": "EVENT_STORE"}},
			want: schema.ErrNameConflict, sensitive: schema.ErrNameConflict},
		{what: "event table is its snapshot table",
			cfg:  schema.Config{Aggregates: []schema.Aggregate{{Name: "S", EventTable: "T", SnapshotTable: "T"}}},
			want: schema.ErrNameConflict, sensitive: schema.ErrNameConflict},
		{what: "two projections, one query table",
			queries: []schema.QueryTable{{Projection: "a-b", Fields: query.Fields}, {Projection: "a.b", Fields: query.Fields}},
			want:    schema.ErrNameConflict, sensitive: schema.ErrNameConflict},
		{what: "reserved word",
			cfg:  schema.Config{TableNames: map[string]string{"consumers_table": "select"}},
			want: schema.ErrReservedWord, sensitive: schema.ErrReservedWord},
		{what: "reserved column",
			queries: []schema.QueryTable{{Projection: "p", Fields: []schema.QueryField{{Column: "Order", Kind: dialect.KindText}}}},
			want:    schema.ErrReservedWord, sensitive: schema.ErrReservedWord},
	}
	for _, c := range cases {
		for name, cat := range map[string]dialect.Catalogue{"postgres": postgres.Catalogue(), "mariadb": mysql.Catalogue(mysql.FlavorMariaDB)} {
			want := c.want
			if cat.Naming.TablesCaseSensitive {
				want = c.sensitive
			}
			err := plan(t, cat, c.cfg, c.queries...)
			if want == nil && err != nil || want != nil && !errors.Is(err, want) {
				t.Errorf("%s on %s: got %v, want %v", c.what, name, err, want)
			}
		}
	}
}

// The conflict error names both spellings and both sources.
func TestNameConflictErrorNamesBoth(t *testing.T) {
	cat := sqlite.Catalogue()
	err := plan(t, cat, schema.Config{Aggregates: []schema.Aggregate{{Namespace: "a", Name: "One", EventTable: "Acct_EVENTS"}, {Namespace: "a", Name: "Two", EventTable: "ACCT_EVENTS"}}})
	var nc *schema.NameConflictError
	if !errors.As(err, &nc) {
		t.Fatalf("want *NameConflictError, got %v", err)
	}
	for _, s := range []string{"Acct_EVENTS", "ACCT_EVENTS", "aggregate a.One", "aggregate a.Two"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error lacks %q: %v", s, err)
		}
	}
}

// idx_<query table>_<column> is checked whole against the limit, and two
// such names are one index where index names are schema-wide.
func TestQueryIndexNames(t *testing.T) {
	long := schema.QueryTable{Projection: "p", Table: "Q" + strings.Repeat("t", 40), Fields: []schema.QueryField{{Column: "c" + strings.Repeat("x", 30), Kind: dialect.KindText}}}
	var tl *schema.NameTooLongError
	if err := plan(t, postgres.Catalogue(), schema.Config{}, long); !errors.As(err, &tl) || !strings.HasSuffix(tl.Derived, long.Fields[0].Column) {
		t.Errorf("postgres: want the whole composite name refused, got %v", err)
	}
	same := []schema.QueryTable{
		{Projection: "q1", Table: "Q_A", Fields: []schema.QueryField{{Column: "b_c", Kind: dialect.KindText}}},
		{Projection: "q2", Table: "Q_A_b", Fields: []schema.QueryField{{Column: "c", Kind: dialect.KindText}}},
	}
	if err := plan(t, h2.Catalogue(), schema.Config{}, same...); !errors.Is(err, schema.ErrNameConflict) {
		t.Errorf("h2 (schema-wide index names): want a conflict for idx_Q_A_b_c twice, got %v", err)
	}
	if err := plan(t, mysql.Catalogue(mysql.FlavorMariaDB), schema.Config{}, same...); err != nil {
		t.Errorf("mariadb (index names per table): %v", err)
	}
	cat := mysql.Catalogue(mysql.FlavorMariaDB)
	got, err := schema.QueryIndexName(&cat, cat.QueryColumns.UniqueIndex, map[string]string{"query_table": "qt", "column": "col"})
	if err != nil || got != "idx_qt_col" {
		t.Errorf("QueryIndexName = %q, %v", got, err)
	}
}
