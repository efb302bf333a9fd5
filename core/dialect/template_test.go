package dialect

import (
	"reflect"
	"testing"
)

func TestCompile(t *testing.T) {
	cases := []struct {
		style  PlaceholderStyle
		sql    string
		params []string
	}{
		{PlaceholderDollar, "UPDATE t SET a = $1 WHERE b = $2 AND c = $3", []string{"x", "y", "x"}},
		{PlaceholderQuestion, "UPDATE t SET a = ? WHERE b = ? AND c = ?", []string{"x", "y", "x"}},
		{PlaceholderAtP, "UPDATE t SET a = @p1 WHERE b = @p2 AND c = @p3", []string{"x", "y", "x"}},
	}
	for _, c := range cases {
		got := Compile("UPDATE t SET a = #{x} WHERE b = #{y} AND c = #{x}", c.style)
		if got.SQL != c.sql || !reflect.DeepEqual(got.Params, c.params) {
			t.Errorf("%s: %+v", c.style, got)
		}
		args, err := got.Args(map[string]any{"x": 1, "y": 2})
		if err != nil || !reflect.DeepEqual(args, []any{1, 2, 1}) {
			t.Errorf("%s: args %v %v", c.style, args, err)
		}
		if _, err := got.Args(map[string]any{"x": 1}); err == nil {
			t.Errorf("missing parameter accepted")
		}
	}
}

func TestFill(t *testing.T) {
	got, err := Fill("CREATE INDEX idx_${t}_g ON ${t} (g)", map[string]string{"t": "EVENT_STORE"})
	if err != nil || got != "CREATE INDEX idx_EVENT_STORE_g ON EVENT_STORE (g)" {
		t.Errorf("%q %v", got, err)
	}
	if _, err := Fill("SELECT ${missing}", nil); err == nil {
		t.Errorf("unfilled placeholder accepted")
	}
}

func TestStandardScriptsCoverEveryTable(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range StandardScripts(ObjectTable) {
		for _, o := range s.Objects {
			seen[o.Placeholder] = true
		}
	}
	for ph := range DefaultNames {
		if !seen[ph] {
			t.Errorf("no standard script creates ${%s}", ph)
		}
	}
}
