package schema_test

import (
	"errors"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/schema"
	"github.com/tidemarkdb/tidemark/plugins/h2"
	"github.com/tidemarkdb/tidemark/plugins/mysql"
	"github.com/tidemarkdb/tidemark/plugins/postgres"
)

// limit31 is a built-in catalogue as an engine with Firebird 3's limit of
// 31 characters would declare it, with the hash naming rule.
func limit31(cat dialect.Catalogue) *dialect.Catalogue {
	cat.Identity.MaxIdentifierLength = 31
	cat.Naming.Shorten = dialect.ShortenHash
	return &cat
}

func planSteps(t *testing.T, cat *dialect.Catalogue, cfg schema.Config, queries ...schema.QueryTable) ([]schema.Step, error) {
	t.Helper()
	names, err := schema.Resolve(cfg)
	if err != nil {
		t.Fatalf("Resolve: %v", err)
	}
	return schema.Plan(cat, names, queries, cfg.Prefixes[dialect.AreaCQRS])
}

var identifierRun = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`)

// The spec's names where they fit, a fixed shortened form where they do
// not, the same on every run, and nothing over the limit in any statement.
func TestShortenHashNamesDerivedObjects(t *testing.T) {
	cat := limit31(h2.Catalogue())
	steps, err := planSteps(t, cat, schema.Config{}, query)
	if err != nil {
		t.Fatalf("Plan: %v", err)
	}
	var all strings.Builder
	for _, s := range steps {
		all.WriteString(s.SQL + "\n")
		for _, id := range identifierRun.FindAllString(s.SQL, -1) {
			if len(id) > 31 {
				t.Errorf("identifier %s (%d characters) in %s", id, len(id), s.SQL)
			}
		}
	}
	ddl := all.String()
	// 40 characters: the first 22, "_", 8 hex digits of SHA-256 of the
	// upper-cased name (h2 folds to upper case). The vector was computed
	// outside Go: python3 -c "import hashlib; print(hashlib.sha256(
	// b'IDX_READ_MODEL_CAPTURE_RECORDS_PARTITION').hexdigest()[:8])".
	for _, want := range []string{
		"CREATE INDEX IF NOT EXISTS idx_READ_MODEL_CAPTURE_be1e0c4a\n    ON READ_MODEL_CAPTURE_RECORDS",
		"idx_EVENT_STORE_partition", // 25 characters: the spec's name
		"idx_account_summary_iban",  // a query-table index that fits
	} {
		if !strings.Contains(ddl, want) {
			t.Errorf("DDL lacks %q", want)
		}
	}
	if strings.Contains(ddl, "idx_READ_MODEL_CAPTURE_RECORDS_partition") {
		t.Errorf("the 40-character name reached the DDL")
	}
	again, err := planSteps(t, cat, schema.Config{}, query)
	if err != nil || !reflect.DeepEqual(steps, again) {
		t.Errorf("a second plan differs (err %v)", err)
	}
	got, err := schema.DerivedName(cat, "idx_READ_MODEL_CAPTURE_RECORDS_partition")
	if err != nil || got != "idx_READ_MODEL_CAPTURE_be1e0c4a" {
		t.Errorf("DerivedName = %q, %v", got, err)
	}
	// Two spellings of one table are one object on a folding engine: one name.
	lower, _ := schema.DerivedName(cat, "idx_read_model_capture_records_partition")
	if !strings.HasSuffix(lower, "_be1e0c4a") {
		t.Errorf("DerivedName of the lower-case spelling = %q, want the same hash", lower)
	}
}

// Without a rule the limit refuses, as before; a table name is never
// shortened, rule or not.
func TestShortenNeverAndTablesRefused(t *testing.T) {
	cat := limit31(h2.Catalogue())
	cat.Naming.Shorten = dialect.ShortenNever
	_, err := planSteps(t, cat, schema.Config{})
	var tl *schema.NameTooLongError
	if !errors.As(err, &tl) || len(tl.Derived) <= 31 {
		t.Fatalf("no rule: want NameTooLongError, got %v", err)
	}
	cat.Naming.Shorten = dialect.ShortenHash
	_, err = planSteps(t, cat, schema.Config{Prefixes: map[dialect.Area]string{dialect.AreaMessaging: "ACME_"}})
	if !errors.As(err, &tl) || tl.Derived != tl.Table || !strings.HasPrefix(tl.Table, "ACME_") {
		t.Fatalf("a 34-character table: want NameTooLongError naming the table, got %v", err)
	}
}

// Two event tables whose index names share their first 22 characters and
// whose hashes collide (found by a search over 36^4 suffixes) are refused
// before any SQL, naming both full names.
func TestShortenHashCollisionRefused(t *testing.T) {
	cat := limit31(h2.Catalogue())
	a, b := "ACCOUNT_HISTORY_X_BFEE", "ACCOUNT_HISTORY_X_BU54"
	for _, tb := range []string{a, b} {
		got, _ := schema.DerivedName(cat, "idx_"+tb+"_aggregate")
		if got != "idx_ACCOUNT_HISTORY_X__c1f45fb1" {
			t.Fatalf("DerivedName(idx_%s_aggregate) = %s: the collision vector no longer holds", tb, got)
		}
	}
	_, err := planSteps(t, cat, schema.Config{Aggregates: []schema.Aggregate{
		{Namespace: "n", Name: "A", EventTable: a, SnapshotTable: "A_SNAPS"},
		{Namespace: "n", Name: "B", EventTable: b, SnapshotTable: "B_SNAPS"},
	}})
	var nc *schema.NameConflictError
	if !errors.As(err, &nc) || !errors.Is(err, schema.ErrInvalidIdentifier) {
		t.Fatalf("want *NameConflictError, got %v", err)
	}
	for _, s := range []string{"idx_" + a + "_aggregate", "idx_" + b + "_aggregate", "naming rule"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error lacks %q: %v", s, err)
		}
	}
}

// A shortened index name that another object already has (a table, where
// indexes share the tables' namespace) is refused as well.
func TestShortenedNameMeetsATable(t *testing.T) {
	cat := limit31(postgres.Catalogue())
	short, err := schema.DerivedName(cat, "idx_READ_MODEL_CAPTURE_RECORDS_partition")
	if err != nil || len(short) != 31 {
		t.Fatalf("DerivedName = %q, %v", short, err)
	}
	_, err = planSteps(t, cat, schema.Config{SagaTables: []string{short}})
	if !errors.Is(err, schema.ErrNameConflict) || !strings.Contains(err.Error(), "READ_MODEL_CAPTURE_RECORDS_partition") {
		t.Fatalf("want a name conflict naming the full name, got %v", err)
	}
}

// A query-table index: the DDL, the guard's bound index name and
// QueryIndexName (what introspection checks compare with) agree.
func TestShortenedQueryIndexGuardAndName(t *testing.T) {
	cat := limit31(mysql.Catalogue(mysql.FlavorMariaDB))
	q := schema.QueryTable{Projection: "p", Table: "ACCOUNT_BALANCES", Fields: []schema.QueryField{{Column: "customer_reference", Kind: dialect.KindText, Unique: true}}}
	steps, err := planSteps(t, cat, schema.Config{}, q)
	if err != nil {
		t.Fatalf("Plan: %v", err)
	}
	want, err := schema.QueryIndexName(cat, cat.QueryColumns.UniqueIndex, map[string]string{"query_table": q.Table, "column": "customer_reference"})
	if err != nil || len(want) != 31 || !strings.HasPrefix(want, "idx_ACCOUNT_BALANCES_c_") {
		t.Fatalf("QueryIndexName = %q, %v", want, err)
	}
	var found bool
	for _, s := range steps {
		if s.Unless == "" {
			continue
		}
		found = true
		if !strings.Contains(s.SQL, want) || !reflect.DeepEqual(s.UnlessArgs, []any{q.Table, want}) {
			t.Errorf("step %q guarded by %v, want index %s", s.SQL, s.UnlessArgs, want)
		}
	}
	if !found {
		t.Fatalf("no guarded query-index step")
	}
}

// Every export renders the shortened names: the plain script and each
// migration tool's files.
func TestShortenedNamesInExports(t *testing.T) {
	cat := limit31(h2.Catalogue())
	names, err := schema.Resolve(schema.Config{})
	if err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"sql", "flyway", "liquibase", "golang-migrate", "goose"} {
		files, err := schema.Export(cat, names, nil, "", format)
		if err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		var all string
		for _, f := range files {
			all += f.Content
		}
		if !strings.Contains(all, "idx_READ_MODEL_CAPTURE_be1e0c4a") || strings.Contains(all, "RECORDS_partition") {
			t.Errorf("%s: the export does not use the shortened name", format)
		}
	}
}

func TestNamingRuleRefusedWhenUnusable(t *testing.T) {
	for _, c := range []struct {
		rule  dialect.ShortenRule
		limit int
	}{{"truncate", 31}, {dialect.ShortenHash, 12}} {
		cat := h2.Catalogue()
		cat.Naming.Shorten, cat.Identity.MaxIdentifierLength = c.rule, c.limit
		_, err := planSteps(t, &cat, schema.Config{})
		var nr *schema.NamingRuleError
		if !errors.As(err, &nr) || !errors.Is(err, schema.ErrNamingRule) {
			t.Errorf("rule %q, limit %d: want *NamingRuleError, got %v", c.rule, c.limit, err)
		}
	}
}

// The built-in dialects' limits (63 and more) fit every name of the spec,
// so their DDL is the same whether or not they declare the rule: turning
// it on changes no statement (their goldens stay as they are).
func TestBuiltinDDLUnchangedByTheRule(t *testing.T) {
	cfg := schema.Config{
		Prefixes:   map[dialect.Area]string{dialect.AreaMessaging: "ACME_", dialect.AreaCQRS: "Q_"},
		Aggregates: []schema.Aggregate{{Namespace: "bank", Name: "BankAccountHistory", OwnTable: true}},
		SagaTables: []string{"ORDER_SAGAS"},
	}
	names := make([]string, 0, len(catalogues))
	for n := range catalogues {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		cat := catalogues[n]
		if cat.Naming.Shorten != dialect.ShortenNever || cat.Identity.MaxIdentifierLength < 63 {
			t.Errorf("%s: declares rule %q with limit %d", n, cat.Naming.Shorten, cat.Identity.MaxIdentifierLength)
		}
		before, err := planSteps(t, &cat, cfg, query)
		if err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		with := cat
		with.Naming.Shorten = dialect.ShortenHash
		after, err := planSteps(t, &with, cfg, query)
		if err != nil || !reflect.DeepEqual(before, after) {
			t.Errorf("%s: the rule changed the DDL (err %v)", n, err)
		}
	}
}
