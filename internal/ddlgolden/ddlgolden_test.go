package ddlgolden

import (
	"strings"
	"testing"

	"github.com/tidemarkdb/tidemark/core/dialect"
)

func TestNormalizeIgnoresWhitespaceCaseSemicolonsComments(t *testing.T) {
	a := "-- PostgreSQL\nCREATE INDEX IF NOT EXISTS idx_PARTITION_MEMBERS_instance_id\n    ON PARTITION_MEMBERS ( instance_id );"
	b := "create index if not exists idx_partition_members_instance_id on partition_members (instance_id)"
	if Normalize(a) != Normalize(b) {
		t.Fatalf("%q != %q", Normalize(a), Normalize(b))
	}
}

func TestSplitStatements(t *testing.T) {
	text := "-- x\nCREATE TABLE t (\n  id INT\n);\nMERGE INTO t\n  USING x;\n\nIF OBJECT_ID(N't', N'U') IS NULL\n  CREATE TABLE t (id INT)\n\nCREATE INDEX i ON t (id)\n"
	got := SplitStatements(text)
	if len(got) != 4 {
		t.Fatalf("got %d statements: %q", len(got), got)
	}
}

func TestCompareReportsDiff(t *testing.T) {
	d := Compare([]string{"CREATE TABLE a (x INT)"}, []string{"CREATE TABLE a (x BIGINT)"})
	if !strings.Contains(d, "- create table a(x bigint)") || !strings.Contains(d, "+ create table a(x int)") {
		t.Fatalf("unexpected diff:\n%s", d)
	}
	if Compare([]string{"A; ", "B"}, []string{"a", "b;"}) != "" {
		t.Fatal("equal statements reported different")
	}
}

func TestQueryColumnsAndIndexes(t *testing.T) {
	qc := dialect.QueryColumnTypes{
		Types:       map[dialect.QueryFieldKind]string{dialect.KindText: "VARCHAR(255)", dialect.KindDecimal: "DECIMAL(${precision},${scale})"},
		Column:      "${column} ${type}",
		Index:       "CREATE INDEX idx_${query_table}_${column} ON ${query_table} (${column})",
		UniqueIndex: "CREATE UNIQUE INDEX idx_${query_table}_${column} ON ${query_table} (${column})",
	}
	cols, err := QueryColumns(qc, ExampleFields)
	if err != nil {
		t.Fatal(err)
	}
	if want := "iban VARCHAR(255),\n    balance DECIMAL(38,10),"; cols != want {
		t.Fatalf("got %q want %q", cols, want)
	}
	idx, err := IndexStatements(qc, ExampleFields, ExampleNames())
	if err != nil {
		t.Fatal(err)
	}
	if idx[0] != "CREATE UNIQUE INDEX idx_account_summary_iban ON account_summary (iban)" ||
		idx[1] != "CREATE INDEX idx_account_summary_balance ON account_summary (balance)" {
		t.Fatalf("got %q", idx)
	}
}
