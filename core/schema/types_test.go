package schema

import (
	"strings"
	"testing"

	"github.com/tidemarkdb/tidemark/core/dialect"
)

func TestSameType(t *testing.T) {
	cases := []struct {
		declared string
		read     Column
		ok       bool
		alias    string
	}{
		{"TIMESTAMPTZ", Column{Type: "TIMESTAMP WITH TIME ZONE"}, true, ""},
		{"VARCHAR", Column{Type: "CHARACTER VARYING"}, true, ""},
		{"DATETIME2", Column{Type: "DATETIME2"}, true, ""},
		{"BOOLEAN", Column{Type: "TINYINT"}, true, "BOOLEAN as TINYINT"},
		{"LONGVARCHAR", Column{Type: "CHARACTER VARYING", Length: n64(16 * 1024 * 1024)}, true, "LONGVARCHAR as CHARACTER VARYING(16777216)"},
		{"TEXT", Column{Type: "VARCHAR", Length: n64(255)}, false, ""},
		{"TIMESTAMP", Column{Type: "TIMESTAMP WITH TIME ZONE"}, false, ""},
		{"BIGINT", Column{Type: "INTEGER"}, false, ""},
	}
	for _, c := range cases {
		ok, alias := SameType(c.declared, c.read)
		if ok != c.ok || alias != c.alias {
			t.Errorf("SameType(%s, %s) = %v %q, want %v %q", c.declared, c.read.Type, ok, alias, c.ok, c.alias)
		}
	}
}

func TestDeclaredFacts(t *testing.T) {
	none := &dialect.Catalogue{}
	if got := MaxDecimalPrecision(none); got != 38 {
		t.Errorf("undeclared max decimal = %d, want 38", got)
	}
	if got := RequiredInstantDigits(none); got != 6 {
		t.Errorf("undeclared instant digits = %d, want 6", got)
	}
	fb := &dialect.Catalogue{Facts: dialect.EngineFacts{MaxDecimalPrecision: 18, InstantDigits: 4}}
	if got := MaxDecimalPrecision(fb); got != 18 {
		t.Errorf("max decimal = %d, want 18", got)
	}
	if got := RequiredInstantDigits(fb); got != 4 {
		t.Errorf("instant digits = %d, want 4", got)
	}
	wide := &dialect.Catalogue{Facts: dialect.EngineFacts{MaxDecimalPrecision: 65, InstantDigits: 9}}
	if MaxDecimalPrecision(wide) != 38 || RequiredInstantDigits(wide) != 6 {
		t.Errorf("wide engine: %d digits, %d fractional; want the spec's 38 and 6", MaxDecimalPrecision(wide), RequiredInstantDigits(wide))
	}
}

// A decimal field wider than the engine declares is refused by the plan,
// before any SQL (an engine stopping at 18 digits).
func TestDecimalWiderThanEngineRefused(t *testing.T) {
	cat := dialect.ANSI()
	cat.Facts.MaxDecimalPrecision = 18
	_, err := QueryColumns(&cat, []QueryField{{Column: "amount", Kind: dialect.KindDecimal, Precision: 19, Scale: 2}})
	if err == nil || !strings.Contains(err.Error(), "at most 18") {
		t.Fatalf("DECIMAL(19,2) on an 18-digit engine: %v", err)
	}
	if _, err := QueryColumns(&cat, []QueryField{{Column: "amount", Kind: dialect.KindDecimal, Precision: 18, Scale: 2}}); err != nil {
		t.Fatalf("DECIMAL(18,2) on an 18-digit engine: %v", err)
	}
}
