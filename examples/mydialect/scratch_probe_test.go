package mydialect_test

import (
	"context"
	"database/sql"
	"testing"

	"github.com/tidemarkdb/tidemark/conformance/harness"
)

func TestScratchProbe(t *testing.T) {
	ctx := context.Background()
	p := harness.NewProvider()
	defer p.Close()
	for _, eng := range []string{"h2", "hsqldb", "postgres", "mariadb"} {
		d, err := p.Open(ctx, eng, "")
		if err != nil {
			t.Logf("%s: %v", eng, err)
			continue
		}
		db, _ := sql.Open(d.DriverName, d.DSN)
		ph := "?"
		if eng == "postgres" {
			ph = "$1"
		}
		for _, q := range []string{
			"VALUES (CURRENT_TIMESTAMP)",
			"SELECT CURRENT_TIMESTAMP",
			"SELECT CURRENT_SCHEMA",
			"VALUES (CURRENT_TIMESTAMP + CAST(" + ph + " AS BIGINT) * INTERVAL '0.001' SECOND)",
			"VALUES (CURRENT_TIMESTAMP + CAST(" + ph + " AS INTEGER) * INTERVAL '0.001' SECOND)",
			"VALUES (CURRENT_TIMESTAMP + " + ph + " * INTERVAL '0.001' SECOND)",
			"VALUES (CURRENT_TIMESTAMP + CAST(" + ph + " AS DECIMAL(18,3)) / 1000 * INTERVAL '1' SECOND)",
			"VALUES (CURRENT_TIMESTAMP + INTERVAL '1' SECOND * " + ph + " / 1000)",
		} {
			var v any
			var err error
			if contains(q, ph) {
				err = db.QueryRowContext(ctx, q, 1500).Scan(&v)
			} else {
				err = db.QueryRowContext(ctx, q).Scan(&v)
			}
			t.Logf("%s: %s => %v (%T) err=%v", eng, q, v, v, err)
		}
		db.Close()
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}
