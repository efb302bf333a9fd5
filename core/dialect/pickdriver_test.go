package dialect_test

import (
	"testing"

	"github.com/tidemarkdb/tidemark/core/dialect"
)

func TestPickDriver(t *testing.T) {
	id := dialect.Identity{DriverName: "pgx", Drivers: []string{"postgres"}}
	for _, c := range []struct {
		registered []string
		want       string
		ok         bool
	}{
		{[]string{"mysql", "pgx", "postgres"}, "pgx", true}, // DriverName first
		{[]string{"postgres", "sqlite"}, "postgres", true},  // then Drivers in order
		{[]string{"mysql", "sqlite"}, "", false},            // none linked
		{nil, "", false},
	} {
		got, ok := id.PickDriver(c.registered)
		if got != c.want || ok != c.ok {
			t.Errorf("PickDriver(%v) = %q, %v; want %q, %v", c.registered, got, ok, c.want, c.ok)
		}
	}
	if got, ok := (dialect.Identity{}).PickDriver([]string{""}); ok {
		t.Errorf("an empty DriverName matched %q", got)
	}
}
