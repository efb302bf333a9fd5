package conformance

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/schema"
)

// indexShape is one index, primary key or unique constraint: its name
// ("" where the engine names it), whether it is unique, its columns in order
// (lower case).
type indexShape struct {
	Name    string
	Unique  bool
	Primary bool // declared as the primary key (read back: unique)
	// Constraint is the declared constraint's name, for messages.
	Constraint string
	Columns    []string
}

func (ix indexShape) String() string {
	kind := "index"
	switch {
	case ix.Primary:
		kind = "primary key"
	case ix.Unique:
		kind = "unique"
	}
	name := ix.Name
	switch {
	case name == "" && ix.Constraint != "":
		name = "constraint " + ix.Constraint
	case name == "":
		name = "(engine-named)"
	}
	return fmt.Sprintf("%s %s (%s)", kind, name, strings.Join(ix.Columns, ", "))
}

// readIndexes reads a table's indexes with the dialect's Introspection.Indexes,
// columns in ordinal order, sorted by name.
func readIndexes(t T, e *engine.Engine, table string) []indexShape {
	t.Helper()
	rows := introspect(t, e, "indexes", table)
	defer rows.Close()
	type col struct {
		name string
		ord  int64
	}
	byName := map[string]*indexShape{}
	cols := map[string][]col{}
	for rows.Next() {
		var name, column, unique, ordinal any
		if err := rows.Scan(&name, &column, &unique, &ordinal); err != nil {
			t.Fatalf("scanning indexes of %s: %v", table, err)
		}
		n := schema.AsString(name)
		if byName[n] == nil {
			byName[n] = &indexShape{Name: n, Unique: schema.AsBool(unique)}
		}
		o, err := schema.AsInt64(ordinal)
		if err != nil || o == nil {
			t.Fatalf("index %s of %s: ordinal %v: %v", n, table, ordinal, err)
		}
		cols[n] = append(cols[n], col{strings.ToLower(schema.AsString(column)), *o})
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("reading indexes of %s: %v", table, err)
	}
	out := make([]indexShape, 0, len(byName))
	for n, ix := range byName {
		cs := cols[n]
		sort.Slice(cs, func(i, j int) bool { return cs[i].ord < cs[j].ord })
		for _, c := range cs {
			ix.Columns = append(ix.Columns, c.name)
		}
		out = append(out, *ix)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

var (
	createIndexRE = regexp.MustCompile(`(?is)\bCREATE\s+(UNIQUE\s+)?(?:(?:ASC|DESC)(?:ENDING)?\s+)?INDEX\s+(?:IF\s+NOT\s+EXISTS\s+)?([A-Za-z0-9_."` + "`" + `\[\]]+)\s+ON\s+([A-Za-z0-9_."` + "`" + `\[\]]+)\s*\(([^)]*)\)`)
	// tableConstraintRE reads a table-level key: [CONSTRAINT name] PRIMARY
	// KEY | UNIQUE [KEY|INDEX] [name] | INDEX|KEY name, then (columns).
	tableConstraintRE = regexp.MustCompile(`(?is)^(?:CONSTRAINT\s+(\S+)\s+)?(PRIMARY\s+KEY|UNIQUE(?:\s+(?:KEY|INDEX))?|INDEX|KEY)\s*(?:(?:NON)?CLUSTERED\s*)?(?:([A-Za-z0-9_]+)\s*)?\(([^)]*)\)`)
	foreignKeyRE      = regexp.MustCompile(`(?is)\bFOREIGN\s+KEY\s*\(([^)]*)\)`)
	columnPKRE        = regexp.MustCompile(`(?i)\bPRIMARY\s+KEY\b`)
	columnUniqueRE    = regexp.MustCompile(`(?i)\bUNIQUE\b`)
	columnRefRE       = regexp.MustCompile(`(?i)\bREFERENCES\b`)
)

// keyColumns reads "a, b DESC, c(10)" as [a b c].
func keyColumns(s string) []string {
	var out []string
	for _, c := range strings.Split(s, ",") {
		f := strings.Fields(strings.TrimSpace(c))
		if len(f) == 0 {
			continue
		}
		out = append(out, strings.ToLower(unquote(f[0])))
	}
	return out
}

func unquote(s string) string { return strings.Trim(s, "\"`[]") }

// lastPart is the name after a schema qualifier.
func lastPart(s string) string {
	s = unquote(s)
	if i := strings.LastIndexByte(s, '.'); i >= 0 {
		s = unquote(s[i+1:])
	}
	return s
}

// declaredKeys reads, from the filled DDL of a plan, every index, primary
// key and unique constraint the plan creates, per table (lower case), with
// the names the dialect's naming produced; and the foreign-key columns of
// each table (engines index those on their own).
func declaredKeys(steps []schema.Step) (keys map[string][]indexShape, fks map[string][][]string) {
	keys, fks = map[string][]indexShape{}, map[string][][]string{}
	for _, st := range steps {
		for _, m := range createIndexRE.FindAllStringSubmatch(st.SQL, -1) {
			table := strings.ToLower(lastPart(m[3]))
			keys[table] = append(keys[table], indexShape{Name: lastPart(m[2]), Unique: m[1] != "", Columns: keyColumns(m[4])})
		}
		table, items, ok := splitCreateTable(st.SQL)
		if !ok {
			continue
		}
		table = strings.ToLower(lastPart(table))
		if _, seen := keys[table+"\x00table"]; seen {
			continue // a guarded CREATE TABLE repeated for another instance
		}
		keys[table+"\x00table"] = nil
		for _, it := range items {
			if m := foreignKeyRE.FindStringSubmatch(it); m != nil {
				fks[table] = append(fks[table], keyColumns(m[1]))
			}
			fields := strings.Fields(it)
			if len(fields) == 0 {
				continue
			}
			if constraintWords[strings.ToUpper(fields[0])] {
				m := tableConstraintRE.FindStringSubmatch(it)
				if m == nil {
					continue // FOREIGN KEY, CHECK
				}
				kind := strings.ToUpper(strings.Fields(m[2])[0])
				// A constraint's name (CONSTRAINT uq_X UNIQUE …) is not the
				// name of the index backing it on every engine (SQLite:
				// sqlite_autoindex_T_2, H2: UQ_X_INDEX_8), so only an index
				// name (MySQL's UNIQUE KEY uq_X, INDEX idx_X) is compared.
				keys[table] = append(keys[table], indexShape{Name: unquote(m[3]), Constraint: unquote(m[1]), Unique: kind != "INDEX" && kind != "KEY", Primary: kind == "PRIMARY", Columns: keyColumns(m[4])})
				continue
			}
			col := strings.ToLower(unquote(fields[0]))
			rest := strings.Join(fields[1:], " ")
			switch {
			case columnPKRE.MatchString(rest):
				keys[table] = append(keys[table], indexShape{Unique: true, Primary: true, Columns: []string{col}})
			case columnUniqueRE.MatchString(rest):
				keys[table] = append(keys[table], indexShape{Unique: true, Columns: []string{col}})
			}
			if columnRefRE.MatchString(rest) {
				fks[table] = append(fks[table], []string{col})
			}
		}
	}
	for k := range keys {
		if strings.HasSuffix(k, "\x00table") {
			delete(keys, k)
		}
	}
	return keys, fks
}

// compareKeys checks every declared key of a table against what the
// catalogue reports: each is there with its columns in order and its
// uniqueness (and its name, where the DDL names it), and nothing else is
// there but the indexes an engine adds for foreign keys.
func compareKeys(t T, table string, declared []indexShape, fks [][]string, read []indexShape) {
	t.Helper()
	used := make([]bool, len(read))
	same := func(a, b []string) bool { return strings.Join(a, ",") == strings.Join(b, ",") }
	for _, d := range declared {
		found := -1
		for i, r := range read {
			if used[i] || !same(d.Columns, r.Columns) {
				continue
			}
			if d.Name != "" && !strings.EqualFold(d.Name, r.Name) {
				continue
			}
			found = i
			break
		}
		if found < 0 {
			t.Errorf("%s: %s declared, not in the catalogue (read back: %v)", table, d, read)
			continue
		}
		used[found] = true
		if read[found].Unique != d.Unique {
			t.Errorf("%s: %s read back as %s", table, d, read[found])
		}
	}
	for i, r := range read {
		if used[i] {
			continue
		}
		fk := false
		for _, f := range fks {
			if len(r.Columns) >= len(f) && same(r.Columns[:len(f)], f) && !r.Unique {
				fk = true
			}
		}
		if !fk {
			t.Errorf("%s: %s in the catalogue, not declared", table, r)
		}
	}
}

// planTables are every table of a plan with its script, query tables and
// per-aggregate tables included, in plan order.
func planTables(cat *dialect.Catalogue, steps []schema.Step) []string {
	var out []string
	seen := map[string]bool{}
	for _, st := range steps {
		table, _, ok := splitCreateTable(st.SQL)
		if !ok {
			continue
		}
		table = lastPart(table)
		if k := strings.ToLower(table); !seen[k] {
			seen[k] = true
			out = append(out, table)
		}
	}
	return out
}

// catalogueSnapshot renders every table of the plan as the catalogue
// reports it, one line per column (name, type, length, precision, scale,
// nullability) and per index (name, uniqueness, columns), plus which
// sequences exist: two snapshots are equal when nothing changed.
func catalogueSnapshot(t T, e *engine.Engine, steps []schema.Step) []string {
	t.Helper()
	ctx := context.Background()
	var out []string
	for _, table := range planTables(e.Cat, steps) {
		cols, err := schema.ReadColumns(ctx, e.DB, e.Cat, table)
		if err != nil {
			t.Fatalf("%v", err)
		}
		for _, c := range cols {
			out = append(out, fmt.Sprintf("%s.%s %s len=%s prec=%s scale=%s nullable=%v", table, strings.ToLower(c.Name), c.Type,
				intOrNull(c.Length), intOrNull(c.Precision), intOrNull(c.Scale), c.Nullable))
		}
		for _, ix := range readIndexes(t, e, table) {
			out = append(out, fmt.Sprintf("%s %s unique=%v (%s)", table, strings.ToLower(ix.Name), ix.Unique, strings.Join(ix.Columns, ",")))
		}
	}
	for _, o := range schema.Objects(e.Cat, e.Names) {
		if o.Kind == dialect.ObjectSequence {
			out = append(out, "sequence "+o.Name)
		}
	}
	return out
}
