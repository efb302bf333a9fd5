// Package ddlgolden checks a dialect's DDL templates against golden files
// extracted from the table-schemas specification (tools/specextract), with
// the deliberate deviations of docs/spec-deviations.md applied by hand.
//
// Check fills every script of a catalogue with the spec's example names and
// compares the result with plugins/<dialect>/testdata/golden/<script-name>:
//
//   - the event-store and snapshot scripts use the spec's representative
//     names account_event and account_event_snapshots, the saga script
//     SAGA_INSTANCES, every other placeholder its dialect.DefaultNames value;
//   - the query-table script uses the spec's account_summary example, an
//     @QueryField(unique = true) iban of kind TEXT and a balance of kind
//     NUMBER decimal(38,10); ${query_columns} is built by QueryColumns and the
//     per-column index statements (IndexStatements) follow the script's own.
//
// The comparison ignores whitespace (runs of it, and any next to a
// parenthesis, comma or semicolon), letter case (the spec says the case of a
// derived index name is cosmetic), statement-ending semicolons and "--"
// comment lines.
package ddlgolden

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tidemarkdb/tidemark/core/dialect"
)

// Field is one query-table column declaration (a @QueryField of the spec).
type Field struct {
	Column    string
	Kind      dialect.QueryFieldKind
	Precision int // KindDecimal only
	Scale     int // KindDecimal only
	Unique    bool
}

// ExampleFields are the query fields of the spec's account-summary example.
var ExampleFields = []Field{
	{Column: "iban", Kind: dialect.KindText, Unique: true},
	{Column: "balance", Kind: dialect.KindDecimal, Precision: 38, Scale: 10},
}

// ExampleNames returns dialect.DefaultNames with the spec's example names for
// the per-table placeholders.
func ExampleNames() map[string]string {
	names := make(map[string]string, len(dialect.DefaultNames)+2)
	for k, v := range dialect.DefaultNames {
		names[k] = v
	}
	names["event_store_table"] = "account_event"
	names["aggregate_snapshots_table"] = "account_event_snapshots"
	names["saga_instances_table"] = "SAGA_INSTANCES"
	names["query_table"] = "account_summary"
	return names
}

// ColumnType returns the column type of a field: qc.Types of its kind, with
// ${precision} and ${scale} filled for a decimal.
func ColumnType(qc dialect.QueryColumnTypes, f Field) (string, error) {
	t, ok := qc.Types[f.Kind]
	if !ok {
		return "", fmt.Errorf("query column %s: no type for kind %s", f.Column, f.Kind)
	}
	return dialect.Fill(t, map[string]string{
		"precision": fmt.Sprint(f.Precision),
		"scale":     fmt.Sprint(f.Scale),
	})
}

// QueryColumns builds the value of ${query_columns}: each field's
// qc.Column filled with ${column} and ${type}, each followed by a comma, one
// per line. The query-table template places it on a line of its own between
// message_id and the primary key, so a projection without query fields still
// yields valid DDL.
func QueryColumns(qc dialect.QueryColumnTypes, fields []Field) (string, error) {
	var b strings.Builder
	for i, f := range fields {
		typ, err := ColumnType(qc, f)
		if err != nil {
			return "", err
		}
		col, err := dialect.Fill(qc.Column, map[string]string{"column": f.Column, "type": typ})
		if err != nil {
			return "", err
		}
		if i > 0 {
			b.WriteString("\n    ")
		}
		b.WriteString(col + ",")
	}
	return b.String(), nil
}

// IndexStatements returns, per field, qc.UniqueIndex or qc.Index filled with
// names and ${column}.
func IndexStatements(qc dialect.QueryColumnTypes, fields []Field, names map[string]string) ([]string, error) {
	out := make([]string, 0, len(fields))
	for _, f := range fields {
		tmpl := qc.Index
		if f.Unique {
			tmpl = qc.UniqueIndex
		}
		vals := make(map[string]string, len(names)+1)
		for k, v := range names {
			vals[k] = v
		}
		vals["column"] = f.Column
		s, err := dialect.Fill(tmpl, vals)
		if err != nil {
			return nil, fmt.Errorf("query index of %s: %w", f.Column, err)
		}
		out = append(out, s)
	}
	return out, nil
}

// Render fills the statements of one script with the spec's example names
// (and, for the query-table script, the example query columns and their
// index statements).
func Render(c dialect.Catalogue, s dialect.Script) ([]string, error) {
	names := ExampleNames()
	var extra []string
	if s.Name == dialect.ScriptQueryTable {
		cols, err := QueryColumns(c.QueryColumns, ExampleFields)
		if err != nil {
			return nil, err
		}
		names["query_columns"] = cols
		extra, err = IndexStatements(c.QueryColumns, ExampleFields, names)
		if err != nil {
			return nil, err
		}
	}
	out := make([]string, 0, len(s.Statements)+len(extra))
	for i, st := range s.Statements {
		f, err := dialect.Fill(st, names)
		if err != nil {
			return nil, fmt.Errorf("statement %d: %w", i+1, err)
		}
		out = append(out, f)
	}
	return append(out, extra...), nil
}

// Check compares every script of c with its golden file in goldenDir, one
// subtest per script. A script without statements or without a golden file
// fails.
func Check(t *testing.T, c dialect.Catalogue, goldenDir string) {
	t.Helper()
	if len(c.Scripts) == 0 {
		t.Fatal("catalogue has no scripts")
	}
	for _, s := range c.Scripts {
		t.Run(s.Name, func(t *testing.T) {
			if len(s.Statements) == 0 {
				t.Fatalf("script %s has no statements", s.Name)
			}
			got, err := Render(c, s)
			if err != nil {
				t.Fatal(err)
			}
			raw, err := os.ReadFile(filepath.Join(goldenDir, s.Name))
			if err != nil {
				t.Fatal(err)
			}
			want := SplitStatements(string(raw))
			if diff := Compare(got, want); diff != "" {
				t.Errorf("%s differs from golden %s (normalized; - golden, + generated):\n%s",
					s.Name, filepath.Join(goldenDir, s.Name), diff)
			}
		})
	}
}

var (
	commentLine = regexp.MustCompile(`(?m)^[ \t]*--.*$`)
	spaces      = regexp.MustCompile(`\s+`)
	aroundPunct = regexp.MustCompile(`\s*([(),;])\s*`)
)

// Normalize reduces a statement to the form Check compares: comment lines
// dropped, whitespace collapsed and removed next to ( ) , ;, trailing
// semicolons dropped, lower case.
func Normalize(stmt string) string {
	s := commentLine.ReplaceAllString(stmt, "")
	s = strings.TrimSpace(spaces.ReplaceAllString(s, " "))
	s = aroundPunct.ReplaceAllString(s, "$1")
	s = strings.TrimRight(s, "; ")
	return strings.ToLower(s)
}

// SplitStatements splits a golden file into statements: a statement ends at
// a line ending with ';' or at a blank line. Comment lines are dropped.
func SplitStatements(text string) []string {
	var (
		out []string
		cur []string
	)
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.Join(cur, "\n"))
			cur = nil
		}
	}
	for _, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case trimmed == "":
			flush()
		case strings.HasPrefix(trimmed, "--"):
		default:
			cur = append(cur, line)
			if strings.HasSuffix(trimmed, ";") {
				flush()
			}
		}
	}
	flush()
	return out
}

// Compare returns "" when the statements got and want normalize to the same
// text (statement boundaries aside), otherwise a line diff of the normalized
// statements.
func Compare(got, want []string) string {
	g := normalizeAll(got)
	w := normalizeAll(want)
	if strings.Join(g, " ") == strings.Join(w, " ") {
		return ""
	}
	return diff(w, g)
}

func normalizeAll(stmts []string) []string {
	out := make([]string, 0, len(stmts))
	for _, s := range stmts {
		if n := Normalize(s); n != "" {
			out = append(out, n)
		}
	}
	return out
}

// diff is a longest-common-subsequence line diff: "-" lines are only in a,
// "+" lines only in b, "  " lines in both.
func diff(a, b []string) string {
	n, m := len(a), len(b)
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var sb strings.Builder
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			sb.WriteString("  " + a[i] + "\n")
			i++
			j++
		case j < m && (i == n || lcs[i][j+1] >= lcs[i+1][j]):
			sb.WriteString("+ " + b[j] + "\n")
			j++
		default:
			sb.WriteString("- " + a[i] + "\n")
			i++
		}
	}
	return sb.String()
}
