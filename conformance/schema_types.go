package conformance

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/tidemarkdb/tidemark/core/schema"
)

// declaredColumn is one column definition of a filled CREATE TABLE.
type declaredColumn struct {
	Name       string
	Type       string // base type as written, upper case, e.g. "TIMESTAMP WITH TIME ZONE"
	Args       []int  // the (n) or (p,s) after the type, if any
	NotNull    bool   // NOT NULL, or part of the primary key
	Definition string // the whole definition, for messages
}

// readColumn is one column as the database's catalogue reports it.
type readColumn = schema.Column

var (
	createTableRE = regexp.MustCompile(`(?is)\bCREATE\s+(?:(?:CACHED|MEMORY|UNLOGGED|GLOBAL|LOCAL|TEMPORARY|TEMP)\s+)*TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?([^\s(]+)\s*\(`)
	// columnTypeRE takes the type off the front of a column definition:
	// base word(s), optional (n) or (p,s), optional WITH/WITHOUT TIME ZONE.
	columnTypeRE = regexp.MustCompile(`^([A-Z][A-Z0-9_]*(?:\s+(?:VARYING|PRECISION|LARGE\s+OBJECT))?)(?:\s*\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\))?((?:\s+(?:WITH|WITHOUT)\s+TIME\s+ZONE)?)`)
	primaryKeyRE = regexp.MustCompile(`(?is)\bPRIMARY\s+KEY\s*\(([^)]*)\)`)
	notNullRE    = regexp.MustCompile(`\bNOT\s+NULL\b|\bPRIMARY\s+KEY\b`)
)

// constraintWords start a table-level item that is not a column.
var constraintWords = map[string]bool{"PRIMARY": true, "UNIQUE": true, "CONSTRAINT": true, "INDEX": true, "KEY": true, "FOREIGN": true, "CHECK": true, "FULLTEXT": true, "SPATIAL": true}

// splitCreateTable returns the table name and the top-level items of the
// CREATE TABLE in a statement (possibly behind a guard such as SQL Server's
// IF OBJECT_ID(...) IS NULL), comments removed; ok is
// false for any other statement.
func splitCreateTable(stmt string) (table string, items []string, ok bool) {
	m := createTableRE.FindStringSubmatchIndex(stmt)
	if m == nil {
		return "", nil, false
	}
	table = strings.Trim(stmt[m[2]:m[3]], "\"`[]")
	depth, quote := 1, byte(0)
	var cur strings.Builder
	for i := m[1]; i < len(stmt); i++ {
		c := stmt[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"' || c == '`':
			quote = c
		case c == '-' && i+1 < len(stmt) && stmt[i+1] == '-':
			for i < len(stmt) && stmt[i] != '\n' {
				i++
			}
			cur.WriteByte(' ')
			continue
		case c == '(':
			depth++
		case c == ')':
			depth--
			if depth == 0 {
				if s := strings.TrimSpace(cur.String()); s != "" {
					items = append(items, s)
				}
				return table, items, true
			}
		case c == ',' && depth == 1:
			items = append(items, strings.TrimSpace(cur.String()))
			cur.Reset()
			continue
		}
		cur.WriteByte(c)
	}
	return table, items, false
}

// declaredColumns parses the column definitions of a CREATE TABLE body.
func declaredColumns(items []string) ([]declaredColumn, error) {
	pk := map[string]bool{}
	var cols []declaredColumn
	for _, it := range items {
		fields := strings.Fields(it)
		if len(fields) == 0 {
			continue
		}
		if constraintWords[strings.ToUpper(fields[0])] {
			if m := primaryKeyRE.FindStringSubmatch(it); m != nil {
				for _, c := range strings.Split(m[1], ",") {
					pk[strings.ToLower(strings.Trim(strings.TrimSpace(c), "\"`[]"))] = true
				}
			}
			continue
		}
		rest := strings.ToUpper(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(it), fields[0])))
		rest = strings.Join(strings.Fields(rest), " ")
		m := columnTypeRE.FindStringSubmatch(rest)
		if m == nil {
			return nil, fmt.Errorf("cannot read the type of column definition %q", it)
		}
		d := declaredColumn{
			Name:       strings.Trim(fields[0], "\"`[]"),
			Type:       strings.Join(strings.Fields(m[1]+m[4]), " "),
			NotNull:    notNullRE.MatchString(rest[len(m[0]):]),
			Definition: strings.Join(strings.Fields(it), " "),
		}
		for _, a := range m[2:4] {
			if a != "" {
				n, _ := strconv.Atoi(a)
				d.Args = append(d.Args, n)
			}
		}
		cols = append(cols, d)
	}
	for i := range cols {
		if pk[strings.ToLower(cols[i].Name)] {
			cols[i].NotNull = true
		}
	}
	return cols, nil
}

// compareColumn returns what differs between a declared column and its
// read-back row (nil when they agree), and the engine equivalence it relied
// on, if any. Types are compared by family (schema.TypeFamily, the table the
// query-table check uses too); no dialect is named here.
func compareColumn(d declaredColumn, r readColumn) (bad []string, alias string) {
	ok, alias := schema.SameType(d.Type, r)
	if !ok {
		bad = append(bad, fmt.Sprintf("type %s, declared %s", r.Type, d.Type))
	}
	switch schema.TypeFamily(d.Type) {
	case "VARCHAR", "CHAR":
		if len(d.Args) > 0 && r.Length != nil && *r.Length != int64(d.Args[0]) {
			bad = append(bad, fmt.Sprintf("length %d, declared %d", *r.Length, d.Args[0]))
		}
	case "DECIMAL":
		if len(d.Args) > 0 && (r.Precision == nil || *r.Precision != int64(d.Args[0])) {
			bad = append(bad, fmt.Sprintf("precision %s, declared %d", intOrNull(r.Precision), d.Args[0]))
		}
		wantScale := 0
		if len(d.Args) > 1 {
			wantScale = d.Args[1]
		}
		if len(d.Args) > 0 && (r.Scale == nil || *r.Scale != int64(wantScale)) {
			bad = append(bad, fmt.Sprintf("scale %s, declared %d", intOrNull(r.Scale), wantScale))
		}
	case "TIMESTAMP", "TIMESTAMPTZ", "TIME", "DATETIME":
		// The fractional-seconds precision arrives in numeric_scale.
		if len(d.Args) > 0 && (r.Scale == nil || *r.Scale != int64(d.Args[0])) {
			bad = append(bad, fmt.Sprintf("fractional seconds %s, declared %d", intOrNull(r.Scale), d.Args[0]))
		}
	}
	if d.NotNull && r.Nullable {
		bad = append(bad, "nullable, declared NOT NULL")
	}
	if !d.NotNull && !r.Nullable {
		bad = append(bad, "NOT NULL, declared nullable")
	}
	return bad, alias
}

func intOrNull(p *int64) string {
	if p == nil {
		return "NULL"
	}
	return strconv.FormatInt(*p, 10)
}

func testReadBackColumnTypes(t T, env *Env) {
	cfg := defaultConfig(env)
	e := openEngine(t, env, cfg)
	steps, err := schema.Plan(e.Cat, e.Names, cfg.QueryTables, "")
	if err != nil {
		t.Fatalf("schema.Plan: %v", err)
	}
	dialectName := e.Cat.Identity.Name
	tables, columns := 0, 0
	seen := map[string]bool{}
	aliases := map[string]int{}
	for _, st := range steps {
		table, items, ok := splitCreateTable(st.SQL)
		if !ok {
			continue
		}
		if seen[strings.ToLower(table)] {
			continue
		}
		seen[strings.ToLower(table)] = true
		decl, err := declaredColumns(items)
		if err != nil {
			t.Fatalf("%s (%s): %v", table, st.Script, err)
		}
		cols, err := schema.ReadColumns(context.Background(), e.DB, e.Cat, table)
		if err != nil {
			t.Fatalf("%v", err)
		}
		read := map[string]readColumn{}
		for _, c := range cols {
			read[strings.ToLower(c.Name)] = c
		}
		if len(read) == 0 {
			t.Errorf("%s: the catalogue reports no columns", table)
			continue
		}
		tables++
		declared := map[string]bool{}
		for _, d := range decl {
			declared[strings.ToLower(d.Name)] = true
			r, ok := read[strings.ToLower(d.Name)]
			if !ok {
				t.Errorf("%s.%s: declared (%s) but not in the catalogue", table, d.Name, d.Definition)
				continue
			}
			columns++
			bad, alias := compareColumn(d, r)
			if alias != "" {
				aliases[alias]++
			}
			if len(bad) > 0 {
				t.Errorf("%s.%s: read back %s (len %s, prec %s, scale %s, nullable %v) for %q: %s",
					table, d.Name, r.Type, intOrNull(r.Length), intOrNull(r.Precision), intOrNull(r.Scale), r.Nullable,
					d.Definition, strings.Join(bad, "; "))
			}
		}
		for _, c := range cols {
			if !declared[strings.ToLower(c.Name)] {
				t.Errorf("%s.%s: in the catalogue but not declared", table, strings.ToLower(c.Name))
			}
		}
	}
	if tables == 0 {
		t.Fatalf("no CREATE TABLE statement found in the plan of %d steps", len(steps))
	}
	t.Logf("%s: %d tables, %d declared columns compared with the catalogue; engine equivalences used: %v", dialectName, tables, columns, aliases)
}
