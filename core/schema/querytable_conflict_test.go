package schema_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/schema"
)

// Two projections on one query table are refused naming both projections
// and both column sets (before, the naming plan named the two sources
// without their columns).
func TestTwoProjectionsOnOneTableNameBothColumnSets(t *testing.T) {
	cat := dialect.ANSI()
	names, err := schema.Resolve(schema.Config{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = schema.Plan(&cat, names, []schema.QueryTable{
		{Projection: "a", Table: "shared_view", Fields: []schema.QueryField{{Column: "iban", Kind: dialect.KindText, Unique: true}}},
		{Projection: "b", Table: "shared_view", Fields: []schema.QueryField{{Column: "balance", Kind: dialect.KindDecimal, Precision: 19, Scale: 2}}},
	}, "")
	var nc *schema.NameConflictError
	if !errors.As(err, &nc) {
		t.Fatalf("want *schema.NameConflictError, got %v", err)
	}
	for _, part := range []string{`"a"`, `"b"`, "iban TEXT unique", "balance NUMBER_DECIMAL(19,2)", "shared_view"} {
		if !strings.Contains(err.Error(), part) {
			t.Errorf("the error does not name %s: %v", part, err)
		}
	}
}
