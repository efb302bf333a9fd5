package schema

import (
	"strings"
	"testing"

	"github.com/tidemarkdb/tidemark/core/dialect"
)

// A template that mixes SQL-text placeholders (${query_columns}) with a
// derived name to shorten: the text goes in verbatim, the name shortened,
// everything else as Fill writes it.
func TestFillShortensAroundTextPlaceholders(t *testing.T) {
	cat := &dialect.Catalogue{Identity: dialect.Identity{Name: "x", MaxIdentifierLength: 31, FoldsUnquotedTo: "upper"},
		Naming: dialect.Naming{Shorten: dialect.ShortenHash}}
	tmpl := "CREATE TABLE ${query_table} (\n    ${query_columns}id INT,\n    CONSTRAINT pk_${query_table}_with_a_long_suffix PRIMARY KEY (id))"
	vals := map[string]string{"query_table": "ACCOUNT_SUMMARY", "query_columns": "iban VARCHAR(255),\n    "}
	got, err := fill(cat, tmpl, vals)
	if err != nil {
		t.Fatal(err)
	}
	short, _ := DerivedName(cat, "pk_ACCOUNT_SUMMARY_with_a_long_suffix")
	want := "CREATE TABLE ACCOUNT_SUMMARY (\n    iban VARCHAR(255),\n    id INT,\n    CONSTRAINT " + short + " PRIMARY KEY (id))"
	if got != want || len(short) != 31 || !strings.HasPrefix(short, "pk_ACCOUNT_SUMMARY_wit_") {
		t.Errorf("fill:\n got  %q\n want %q", got, want)
	}
	// A missing placeholder is still an error naming it.
	if _, err := fill(cat, tmpl, map[string]string{"query_table": "ACCOUNT_SUMMARY"}); err == nil || !strings.Contains(err.Error(), "query_columns") {
		t.Errorf("missing ${query_columns}: %v", err)
	}
}
