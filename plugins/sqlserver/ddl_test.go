package sqlserver

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
		Identity:      dialect.Identity{Name: "sqlserver", MaxIdentifierLength: MaxIdentifierLength},
		Scripts:       dialect.Scripts(dialect.ObjectTable, ddl()),
		QueryColumns:  queryColumns(),
		Introspection: introspection(),
	}
}

// TestDDLGolden compares every script, filled with the spec's example names,
// with the spec's SQL Server DDL (deviations applied by hand to the golden
// files). There is no SQL Server on this machine; the conformance suite runs
// the DDL on a real server where Docker answers.
func TestDDLGolden(t *testing.T) {
	ddlgolden.Check(t, testCatalogue(), "testdata/golden")
}

// TestEveryScriptHasStatements guards against a script name typo.
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

var (
	createTable = regexp.MustCompile(`CREATE TABLE \$\{([a-z_]+)\}`)
	tableGuard  = regexp.MustCompile(`^(?:IF OBJECT_ID\(N'\$\{([a-z_]+)\}', N'U'\) IS NULL|IF NOT EXISTS \(SELECT \* FROM sys\.tables WHERE name = '\$\{([a-z_]+)\}'\))\n`)
	indexGuard  = regexp.MustCompile(`^IF NOT EXISTS \(SELECT 1 FROM sys\.indexes WHERE name = '([^']+)'\s+AND object_id = OBJECT_ID\(N'(\$\{[a-z_]+\})'\)\)\s+CREATE (?:UNIQUE )?INDEX ([^\s]+)\s+ON ([^\s]+) `)
)

// TestEveryStatementIsGuarded checks that T-SQL without IF NOT EXISTS
// clauses is still idempotent: each CREATE TABLE is guarded by a check of the
// same table, each CREATE INDEX by a check of the same index on the same
// table, and each INSERT is a seed that inserts only a missing row.
func TestEveryStatementIsGuarded(t *testing.T) {
	qc := queryColumns()
	type stmt struct{ where, sql string }
	var all []stmt
	for _, s := range dialect.Scripts(dialect.ObjectTable, ddl()) {
		var created []string
		for _, st := range s.Statements {
			all = append(all, stmt{s.Name, st})
			if m := createTable.FindStringSubmatch(st); m != nil {
				created = append(created, m[1])
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
	all = append(all, stmt{"Index", qc.Index}, stmt{"UniqueIndex", qc.UniqueIndex})
	for _, s := range all {
		switch {
		case strings.Contains(s.sql, "CREATE TABLE"):
			g := tableGuard.FindStringSubmatch(s.sql)
			c := createTable.FindStringSubmatch(s.sql)
			if g == nil || g[1]+g[2] != c[1] {
				t.Errorf("%s: CREATE TABLE ${%s} is not guarded by a check of the same table:\n%s", s.where, c[1], s.sql)
			}
		case strings.Contains(s.sql, "CREATE"):
			g := indexGuard.FindStringSubmatch(s.sql)
			if g == nil || g[1] != g[3] || g[2] != g[4] {
				t.Errorf("%s: CREATE INDEX is not guarded by a check of the same index and table:\n%s", s.where, s.sql)
			}
		case strings.HasPrefix(s.sql, "INSERT INTO"):
			if !strings.Contains(s.sql, "WHERE NOT EXISTS") || !strings.Contains(s.sql, "WITH (UPDLOCK, HOLDLOCK)") {
				t.Errorf("%s: seed may insert twice:\n%s", s.where, s.sql)
			}
		default:
			t.Errorf("%s: unexpected statement:\n%s", s.where, s.sql)
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

// TestQueryColumns checks the query-field type map and the bind parameters of
// the catalogue queries.
func TestQueryColumns(t *testing.T) {
	qc := queryColumns()
	for _, k := range []dialect.QueryFieldKind{dialect.KindText, dialect.KindInteger, dialect.KindDecimal,
		dialect.KindDate, dialect.KindTime, dialect.KindInstant, dialect.KindBoolean} {
		if qc.Types[k] == "" {
			t.Errorf("no column type for %s", k)
		}
	}
	if !strings.HasSuffix(qc.UniqueIndex, "WHERE ${column} IS NOT NULL") {
		t.Errorf("unique query index is not filtered, so a second NULL would violate it:\n%s", qc.UniqueIndex)
	}
	c := dialect.Compile(qc.IndexExists, dialect.PlaceholderAtP)
	if strings.Join(c.Params, ",") != "index,table" {
		t.Errorf("IndexExists binds %v, want [index table]", c.Params)
	}
	in := introspection()
	for name, q := range map[string]string{"TableExists": in.TableExists, "Columns": in.Columns, "Indexes": in.Indexes} {
		if c := dialect.Compile(q, dialect.PlaceholderAtP); strings.Join(c.Params, ",") != "table" {
			t.Errorf("%s binds %v, want [table]", name, c.Params)
		}
	}
}

// keyColumnRe finds a [N]VARCHAR column definition and the rest of its line.
var keyColumnRe = regexp.MustCompile(`(?m)^\s+(\w+)\s+N?VARCHAR\((\d+)\)(.*)$`)

// keyClauseRe finds the column list of a key: PRIMARY KEY [NONCLUSTERED]
// (…), UNIQUE (…), and an index's ON ${table} (…).
var keyClauseRe = regexp.MustCompile(`(?:PRIMARY KEY(?: NONCLUSTERED)?|UNIQUE|ON \$\{\w+\})\s*\(([^)]+)\)`)

// TestKeyColumnsCompareExactly: every [N]VARCHAR column of a primary key,
// unique key or index is under a BIN2 collation (exact case and code points;
// trailing spaces are handled by KeysIgnoreTrailingSpaces). VARCHAR(36)
// columns hold UUIDs the core writes in canonical lower case; they are exempt.
func TestKeyColumnsCompareExactly(t *testing.T) {
	n := 0
	for name, stmts := range ddl() {
		cols := map[string]string{}
		keyed := map[string]bool{}
		for _, st := range stmts {
			for _, m := range keyColumnRe.FindAllStringSubmatch(st, -1) {
				if m[2] != "36" {
					cols[m[1]] = m[3]
				}
				if strings.Contains(m[3], "PRIMARY KEY") {
					keyed[m[1]] = true
				}
			}
			for _, m := range keyClauseRe.FindAllStringSubmatch(st, -1) {
				for _, c := range strings.Split(m[1], ",") {
					keyed[strings.Fields(c)[0]] = true
				}
			}
		}
		for c := range keyed {
			rest, ok := cols[c]
			if !ok {
				continue
			}
			n++
			if !strings.Contains(rest, "COLLATE Latin1_General_100_BIN2") {
				t.Errorf("%s: key column %s is not under a BIN2 collation: %s", name, c, strings.TrimSpace(rest))
			}
		}
	}
	t.Logf("%d [N]VARCHAR key columns checked", n)
	if n < 25 {
		t.Errorf("found %d key columns, expected at least 25: the parser misses some", n)
	}
	if !Catalogue().KeysIgnoreTrailingSpaces {
		t.Errorf("SQL Server pads under every collation: the catalogue must declare KeysIgnoreTrailingSpaces")
	}
}
