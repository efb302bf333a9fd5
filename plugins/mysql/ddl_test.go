package mysql

import (
	"regexp"
	"strings"
	"testing"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/internal/ddlgolden"
)

// testCatalogue is the DDL part of the catalogue, as the golden check needs it.
func testCatalogue() dialect.Catalogue {
	return dialect.Catalogue{
		Identity:      dialect.Identity{Name: "mysql", MaxIdentifierLength: MaxIdentifierLength},
		Scripts:       dialect.Scripts(dialect.ObjectTable, ddl()),
		QueryColumns:  queryColumns(),
		Introspection: introspection(),
	}
}

// TestDDLGolden compares every script, filled with the spec's example names,
// with the spec's MySQL DDL (deviations applied by hand to the golden files).
func TestDDLGolden(t *testing.T) {
	ddlgolden.Check(t, testCatalogue(), "testdata/golden")
}

// TestEveryScriptHasStatements guards against a script name typo: a name
// missing from ddl() would give its script no statements.
func TestEveryScriptHasStatements(t *testing.T) {
	m := ddl()
	specs := dialect.StandardScripts(dialect.ObjectTable)
	if len(m) != len(specs) {
		t.Errorf("ddl() has %d scripts, the standard has %d", len(m), len(specs))
	}
	for _, s := range specs {
		if len(m[s.Name]) == 0 {
			t.Errorf("script %s has no statements", s.Name)
		}
	}
}

var createTable = regexp.MustCompile(`(?s)^CREATE TABLE IF NOT EXISTS \$\{([a-z_]+)\}`)

// TestEveryTableIsUTF8MB4 checks that no table depends on the server's
// default character set, and that each script creates exactly its objects.
func TestEveryTableIsUTF8MB4(t *testing.T) {
	for _, s := range dialect.Scripts(dialect.ObjectTable, ddl()) {
		var created []string
		for _, st := range s.Statements {
			m := createTable.FindStringSubmatch(st)
			if m == nil {
				continue
			}
			created = append(created, m[1])
			if !strings.HasSuffix(st, ") DEFAULT CHARSET = utf8mb4") {
				t.Errorf("%s: CREATE TABLE ${%s} does not end with DEFAULT CHARSET = utf8mb4", s.Name, m[1])
			}
		}
		var want []string
		for _, o := range s.Objects {
			want = append(want, o.Placeholder)
		}
		if strings.Join(created, ",") != strings.Join(want, ",") {
			t.Errorf("%s creates %v, its objects are %v", s.Name, created, want)
		}
	}
}

// TestPlaceholdersAreKnown checks that every ${…} of a script is a table
// placeholder of dialect.DefaultNames (or the query table's own ones).
func TestPlaceholdersAreKnown(t *testing.T) {
	for _, s := range dialect.Scripts(dialect.ObjectTable, ddl()) {
		for _, st := range s.Statements {
			for _, p := range dialect.Placeholders(st) {
				if _, ok := dialect.DefaultNames[p]; ok || p == "query_table" || p == "query_columns" {
					continue
				}
				t.Errorf("%s: unknown placeholder ${%s}", s.Name, p)
			}
		}
	}
}

// TestIdentifierHeadroom lists, for the record, how long a table name may be
// on MySQL before one of its derived names passes 64 characters.
func TestIdentifierHeadroom(t *testing.T) {
	derived := regexp.MustCompile(`[A-Za-z_]*\$\{([a-z_]+)\}[A-Za-z_]*`)
	for _, s := range dialect.Scripts(dialect.ObjectTable, ddl()) {
		for _, st := range s.Statements {
			for _, m := range derived.FindAllStringSubmatch(st, -1) {
				extra := len(m[0]) - len("${"+m[1]+"}")
				if extra == 0 {
					continue
				}
				if max := MaxIdentifierLength - extra; max < 40 {
					t.Errorf("%s: %s leaves only %d characters for the table name", s.Name, m[0], max)
				}
			}
		}
	}
}

// TestQueryColumns checks the query-field type map covers every kind.
func TestQueryColumns(t *testing.T) {
	qc := queryColumns()
	for _, k := range []dialect.QueryFieldKind{dialect.KindText, dialect.KindInteger, dialect.KindDecimal,
		dialect.KindDate, dialect.KindTime, dialect.KindInstant, dialect.KindBoolean} {
		if qc.Types[k] == "" {
			t.Errorf("no column type for %s", k)
		}
	}
	if qc.IndexExists == "" {
		t.Error("MySQL 8 has no CREATE INDEX IF NOT EXISTS: IndexExists must guard the query indexes")
	}
	c := dialect.Compile(qc.IndexExists, dialect.PlaceholderQuestion)
	if strings.Join(c.Params, ",") != "table,index" {
		t.Errorf("IndexExists binds %v, want [table index]", c.Params)
	}
	for name, q := range map[string]string{"TableExists": introspection().TableExists,
		"Columns": introspection().Columns, "Indexes": introspection().Indexes} {
		if c := dialect.Compile(q, dialect.PlaceholderQuestion); strings.Join(c.Params, ",") != "table" {
			t.Errorf("%s binds %v, want [table]", name, c.Params)
		}
	}
}

// keyColumnRe finds a VARCHAR column definition and the rest of its line.
var keyColumnRe = regexp.MustCompile(`(?m)^\s+(\w+)\s+VARCHAR\((\d+)\)(.*)$`)

// keyClauseRe finds the column list of a key: PRIMARY KEY (…), UNIQUE [KEY
// name] (…), INDEX name (…).
var keyClauseRe = regexp.MustCompile(`(?:PRIMARY KEY|UNIQUE(?: KEY)?(?: [\w${}]+)?|INDEX [\w${}]+)\s*\(([^)]+)\)`)

// TestKeyColumnsCompareExactly: every VARCHAR column that is part of a
// primary key, a unique key or an index carries keyText (binary, NO PAD),
// so no key column can be added on the default collation (case-insensitive)
// or on utf8mb4_bin (PAD SPACE). VARCHAR(36) columns hold UUIDs the core
// writes in canonical lower case; they are exempt.
func TestKeyColumnsCompareExactly(t *testing.T) {
	n := 0
	for name, stmts := range ddl() {
		for _, st := range stmts {
			cols := map[string]string{}
			for _, m := range keyColumnRe.FindAllStringSubmatch(st, -1) {
				if m[2] != "36" {
					cols[m[1]] = m[3]
				}
			}
			keyed := map[string]bool{}
			for c, rest := range cols {
				if strings.Contains(rest, "PRIMARY KEY") {
					keyed[c] = true
				}
			}
			for _, m := range keyClauseRe.FindAllStringSubmatch(st, -1) {
				for _, c := range strings.Split(m[1], ",") {
					keyed[strings.Fields(c)[0]] = true
				}
			}
			for c := range keyed {
				rest, ok := cols[c]
				if !ok {
					continue // not a VARCHAR (or a UUID)
				}
				n++
				if !strings.Contains(rest, strings.TrimSpace(keyText)) {
					t.Errorf("%s: key column %s is not binary NO PAD: %s", name, c, strings.TrimSpace(rest))
				}
			}
		}
	}
	t.Logf("%d VARCHAR key columns checked", n)
	if n < 25 {
		t.Errorf("found %d VARCHAR key columns, expected at least 25: the parser misses some", n)
	}
}
