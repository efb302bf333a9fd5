package ddlgolden

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"

	"github.com/tidemarkdb/tidemark/core/dialect"
)

// Statements renders every script of c in creation order with the spec's
// example names (see Render), and returns the tables and sequences the
// scripts create, as the engine stores their names (fold: "lower", "upper" or
// "" as in Identity.FoldsUnquotedTo).
func Statements(c dialect.Catalogue, fold string) (stmts []string, tables, sequences []string, err error) {
	names := ExampleNames()
	for _, s := range c.Scripts {
		r, err := Render(c, s)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("%s: %w", s.Name, err)
		}
		stmts = append(stmts, r...)
		for _, o := range s.Objects {
			n := foldName(names[o.Placeholder], fold)
			if o.Kind == dialect.ObjectSequence {
				sequences = append(sequences, n)
			} else {
				tables = append(tables, n)
			}
		}
	}
	return stmts, tables, sequences, nil
}

func foldName(n, fold string) string {
	switch fold {
	case "lower":
		return strings.ToLower(n)
	case "upper":
		return strings.ToUpper(n)
	}
	return n
}

// RunTwice runs every statement of c on db twice (the second run must raise
// nothing) and checks, through c.Introspection, that every object exists after
// the first run and that the second run changed no table's columns, indexes
// or row count. db must be an empty schema.
func RunTwice(t *testing.T, db *sql.DB, c dialect.Catalogue, fold string) {
	t.Helper()
	ctx := context.Background()
	stmts, tables, sequences, err := Statements(c, fold)
	if err != nil {
		t.Fatal(err)
	}
	run := func(round int) {
		for _, s := range stmts {
			if _, err := db.ExecContext(ctx, s); err != nil {
				t.Fatalf("run %d: %v\n%s", round, err, s)
			}
		}
	}
	run(1)
	for _, seq := range sequences {
		if !exists(t, db, c, c.Introspection.SequenceExists, "sequence", seq) {
			t.Errorf("sequence %s missing after the DDL", seq)
		}
	}
	before := map[string]string{}
	for _, tb := range tables {
		if !exists(t, db, c, c.Introspection.TableExists, "table", tb) {
			t.Errorf("table %s missing after the DDL", tb)
			continue
		}
		before[tb] = shape(t, db, c, tb)
	}
	run(2)
	for _, tb := range tables {
		if b, ok := before[tb]; ok {
			if a := shape(t, db, c, tb); a != b {
				t.Errorf("table %s changed on the second run:\nbefore: %s\nafter:  %s", tb, b, a)
			}
		}
	}
}

func exists(t *testing.T, db *sql.DB, c dialect.Catalogue, q, param, name string) bool {
	t.Helper()
	if q == "" {
		t.Fatalf("introspection has no query for a %s", param)
	}
	cq := dialect.Compile(q, c.Identity.Placeholder)
	args, err := cq.Args(map[string]any{param: name})
	if err != nil {
		t.Fatal(err)
	}
	rows, err := db.Query(cq.SQL, args...)
	if err != nil {
		t.Fatalf("%s exists: %v", param, err)
	}
	defer rows.Close()
	return rows.Next()
}

// shape is a table's columns, indexes and row count as text.
func shape(t *testing.T, db *sql.DB, c dialect.Catalogue, table string) string {
	t.Helper()
	var b strings.Builder
	for _, q := range []string{c.Introspection.Columns, c.Introspection.Indexes} {
		rows := query(t, db, c, q, table)
		if len(rows) == 0 {
			t.Errorf("introspection of %s returned no rows for\n%s", table, q)
		}
		fmt.Fprintf(&b, "%v; ", rows)
	}
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM " + table).Scan(&n); err != nil {
		t.Fatalf("count %s: %v", table, err)
	}
	fmt.Fprintf(&b, "rows=%d", n)
	return b.String()
}

// Query runs an introspection query binding #{table} and returns its rows
// as strings (NULL as "<nil>").
func query(t *testing.T, db *sql.DB, c dialect.Catalogue, q, table string) [][]string {
	t.Helper()
	cq := dialect.Compile(q, c.Identity.Placeholder)
	args, err := cq.Args(map[string]any{"table": table})
	if err != nil {
		t.Fatal(err)
	}
	rows, err := db.Query(cq.SQL, args...)
	if err != nil {
		t.Fatalf("introspection of %s: %v\n%s", table, err, q)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out [][]string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		row := make([]string, len(cols))
		for i, v := range vals {
			if b, ok := v.([]byte); ok {
				v = string(b)
			}
			row[i] = fmt.Sprint(v)
		}
		out = append(out, row)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// Introspect returns the Columns and Indexes rows of a table, for tests that
// check the introspection queries' output.
func Introspect(t *testing.T, db *sql.DB, c dialect.Catalogue, table string) (columns, indexes [][]string) {
	t.Helper()
	return query(t, db, c, c.Introspection.Columns, table), query(t, db, c, c.Introspection.Indexes, table)
}
