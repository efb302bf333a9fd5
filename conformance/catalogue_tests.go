package conformance

import (
	"regexp"
	"strings"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/sqlerr"
)

func catalogueTests() []Test {
	return []Test{
		{"catalogue/complete_and_well_formed", testCatalogue},
	}
}

// knownPlaceholders are the ${…} names a template may use besides the
// shared table names.
var knownPlaceholders = map[string]bool{
	"position_table": true, "query_table": true, "query_columns": true,
	"column": true, "type": true, "precision": true, "scale": true,
}

var bindName = regexp.MustCompile(`#\{[a-z_]+\}`)

func testCatalogue(t T, env *Env) {
	c := env.Catalogue
	if err := engine.Validate(&c); err != nil {
		t.Fatalf("%v", err)
	}
	id := c.Identity
	if id.Name == "" || id.Version == "" || id.DriverName == "" || id.DSNHint == "" || id.QuoteOpen == "" || id.MaxIdentifierLength < 30 {
		t.Errorf("identity incomplete: %+v", id)
	}
	switch id.Placeholder {
	case dialect.PlaceholderQuestion, dialect.PlaceholderDollar, dialect.PlaceholderAtP, dialect.PlaceholderColon:
	default:
		t.Errorf("unknown placeholder style %q", id.Placeholder)
	}
	std := dialect.StandardScripts(dialect.ObjectTable)
	if len(c.Scripts) != len(std) {
		t.Errorf("%d scripts, want the %d standard ones", len(c.Scripts), len(std))
	}
	for i, sc := range c.Scripts {
		if i < len(std) && sc.Name != std[i].Name {
			t.Errorf("script %d is %s, want %s (creation order)", i, sc.Name, std[i].Name)
		}
		for _, st := range sc.Statements {
			checkTemplate(t, "script "+sc.Name, st)
		}
	}
	for sid, st := range c.Statements {
		checkTemplate(t, "statement "+string(sid), st)
	}
	checkTemplate(t, "event insert", c.EventInsert.Head+c.EventInsert.Row+c.EventInsert.Tail)
	for _, k := range []dialect.QueryFieldKind{dialect.KindText, dialect.KindInteger, dialect.KindDecimal, dialect.KindDate, dialect.KindTime, dialect.KindInstant, dialect.KindBoolean} {
		if c.QueryColumns.Types[k] == "" {
			t.Errorf("no query column type for %s", k)
		}
	}
	if c.QueryColumns.Index == "" || c.QueryColumns.UniqueIndex == "" || c.QueryColumns.Column == "" {
		t.Errorf("query column templates incomplete")
	}
	if c.Introspection.Columns == "" || c.Introspection.Indexes == "" {
		t.Errorf("introspection incomplete")
	}
	if _, err := sqlerr.NewClassifier(c.Errors); err != nil {
		t.Errorf("error rules: %v", err)
	}
	classes := map[dialect.ErrorClass]bool{}
	for _, r := range c.Errors {
		classes[r.Class] = true
	}
	for _, need := range []dialect.ErrorClass{dialect.ErrUniqueViolation, dialect.ErrDuplicateEventID} {
		if !classes[need] {
			t.Errorf("no error rule for %s", need)
		}
	}
}

func checkTemplate(t T, where, tmpl string) {
	t.Helper()
	for _, p := range dialect.Placeholders(tmpl) {
		if _, ok := dialect.DefaultNames[p]; !ok && !knownPlaceholders[p] {
			t.Errorf("%s: unknown placeholder ${%s}", where, p)
		}
	}
	rest := bindName.ReplaceAllString(tmpl, "")
	if strings.Contains(rest, "#{") {
		t.Errorf("%s: malformed bind in %q", where, tmpl)
	}
}
