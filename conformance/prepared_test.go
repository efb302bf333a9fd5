package conformance_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tidemarkdb/tidemark/conformance"
	"github.com/tidemarkdb/tidemark/conformance/harness"
	"github.com/tidemarkdb/tidemark/core/dialect/plugin"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/internal/testtime"
)

// A copy of the prepared schema (what the suite's tests get where the
// server can copy a database) is what engine.Open leaves in a fresh
// database: the same tables, columns, indexes, sequence states and seed
// rows (instants aside: they say when each was laid out).
func TestPreparedCopyMatchesFresh(t *testing.T) {
	if err := pluginErr("postgres"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := testtime.Context(context.Background(), 5*time.Minute)
	defer cancel()
	loaded, err := plugin.Load(ctx, plugin.LoadOptions{Name: "postgres", PluginDirs: []string{pluginDir}})
	if err != nil {
		t.Fatalf("loading plugin: %v", err)
	}
	cfg := conformance.DefaultConfig(loaded.Catalogue)
	layOut := func(d *harness.Database) {
		db, err := sql.Open(d.DriverName, d.DSN)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		e, err := engine.Open(ctx, db, loaded.Catalogue, cfg)
		if err != nil {
			t.Fatalf("engine.Open: %v", err)
		}
		e.Close()
	}
	open := func() *harness.Database {
		d, err := provider.Open(ctx, harness.EnginePostgres, "pgx")
		var sk *harness.Skipped
		if errors.As(err, &sk) {
			t.Skipf("no PostgreSQL: %s", sk.Reason)
		}
		if err != nil {
			t.Fatal(err) // a server that should start and did not is a failure, not a skip
		}
		return d
	}
	tmpl := open() // the first Open may start the server
	layOut(tmpl)
	start := time.Now()
	fresh := open()
	layOut(fresh)
	freshTook := time.Since(start)
	if !provider.CanClone(harness.EnginePostgres) {
		t.Skip("this PostgreSQL server is not one the harness can copy databases on")
	}
	start = time.Now()
	cp, err := provider.Clone(ctx, tmpl)
	if err != nil {
		t.Fatalf("clone: %v", err)
	}
	copyTook := time.Since(start)
	defer func() {
		start := time.Now()
		if err := provider.Drop(ctx, cp); err != nil {
			t.Errorf("drop: %v", err)
		}
		t.Logf("a fresh database with the DDL took %v, a copy %v, dropping it %v (load %s)", freshTook, copyTook, time.Since(start), testtime.Describe(time.Second))
	}()
	want, got := pgDump(t, ctx, fresh), pgDump(t, ctx, cp)
	if want != got {
		t.Fatalf("a copy of the prepared schema differs from a fresh one\nfresh:\n%s\ncopy:\n%s", want, got)
	}
	t.Logf("copy and fresh agree:\n%s", got)
}

// pgDump renders a database's tables, columns, indexes, sequences and rows
// (timestamp columns left out) as text.
func pgDump(t *testing.T, ctx context.Context, d *harness.Database) string {
	t.Helper()
	db, err := sql.Open(d.DriverName, d.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var b strings.Builder
	lines := func(q string) []string {
		rows, err := db.QueryContext(ctx, q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				t.Fatal(err)
			}
			out = append(out, s)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return out
	}
	for _, l := range lines(`SELECT table_name || '.' || column_name || ' ' || data_type || ' ' || is_nullable || ' ' || coalesce(column_default, '') FROM information_schema.columns WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position`) {
		fmt.Fprintln(&b, "column", l)
	}
	for _, l := range lines(`SELECT indexdef FROM pg_indexes WHERE schemaname = current_schema() ORDER BY indexname`) {
		fmt.Fprintln(&b, "index", l)
	}
	for _, l := range lines(`SELECT sequencename || ' last ' || coalesce(last_value::text, 'none') || ' cache ' || cache_size FROM pg_sequences WHERE schemaname = current_schema() ORDER BY sequencename`) {
		fmt.Fprintln(&b, "sequence", l)
	}
	for _, table := range lines(`SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name`) {
		cols := lines(`SELECT quote_ident(column_name) FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = '` + table + `' AND data_type NOT LIKE 'timestamp%' ORDER BY ordinal_position`)
		if len(cols) == 0 {
			continue
		}
		for _, l := range lines(`SELECT row(` + strings.Join(cols, ", ") + `)::text FROM ` + `"` + table + `"` + ` ORDER BY 1`) {
			fmt.Fprintln(&b, "row", table, l)
		}
	}
	return b.String()
}
