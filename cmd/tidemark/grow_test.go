package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/golang-migrate/migrate/v4"
	migratedb "github.com/golang-migrate/migrate/v4/database"
	migratemysql "github.com/golang-migrate/migrate/v4/database/mysql"
	migratepg "github.com/golang-migrate/migrate/v4/database/postgres"
	migratesqlite "github.com/golang-migrate/migrate/v4/database/sqlite"
	"github.com/golang-migrate/migrate/v4/source/iofs"
	"github.com/pressly/goose/v3"

	"github.com/tidemarkdb/tidemark/conformance/harness"
)

// The application before and after it grows: a new aggregate on its own
// tables, a new query table and a new saga table.
const (
	growV1 = `dialect: %s
prefix: APP_
aggregates:
  - type: shop.Order
    own_table: true
  - type: shop.Customer
query_tables:
  - projection: order-list
    columns:
      - {name: customer, kind: text}
      - {name: total, kind: decimal, precision: 12, scale: 2}
`
	growV2 = growV1 + `  - projection: payment-summary
    columns:
      - {name: payment_ref, kind: text, unique: true}
      - {name: amount, kind: decimal, precision: 15, scale: 4} # SQLite keeps 15 digits exactly (EngineFacts.MaxDecimalPrecision)
      - {name: paid_at, kind: instant}
      - {name: settled, kind: boolean}
      - {name: attempts, kind: integer}
saga_tables: [PAYMENT_SAGA]
`
	growAggregate = `  - type: billing.Payment
    own_table: true
`
)

// grownConfig inserts the new aggregate after the existing ones, so the
// grown configuration is what a user edits, not an append.
func grownConfig(dialectName string) string {
	v2 := fmt.Sprintf(growV2, dialectName)
	return strings.Replace(v2, "query_tables:\n", growAggregate+"query_tables:\n", 1)
}

// TestMigrationsStayCorrectWhenTheApplicationGrows exports the schema for
// goose and golang-migrate, migrates a database with the real tool, grows
// the configuration, exports again into the same directory, migrates again,
// and compares the database's catalogue with a fresh database made by
// `tidemark migrate` from the grown configuration: they must be identical.
func TestMigrationsStayCorrectWhenTheApplicationGrows(t *testing.T) {
	if testing.Short() {
		t.Skip("starts database servers")
	}
	prov := harness.NewProvider()
	t.Cleanup(func() { prov.Close() })
	for _, engine := range []string{harness.EnginePostgres, harness.EngineMariaDB, harness.EngineSQLite} {
		for _, tool := range []string{"goose", "golang-migrate"} {
			t.Run(engine+"/"+tool, func(t *testing.T) {
				growAndCompare(t, prov, engine, tool)
			})
		}
	}
}

func growAndCompare(t *testing.T, prov *harness.Provider, engine, tool string) {
	ctx := context.Background()
	migrated := openOrSkip(t, prov, engine)
	fresh := openOrSkip(t, prov, engine)
	dir, cfgDir := t.TempDir(), t.TempDir()
	v1 := writeConfigAs(t, cfgDir, "v1.yaml", fmt.Sprintf(growV1, engine))
	v2 := writeConfigAs(t, cfgDir, "v2.yaml", grownConfig(engine))

	export(t, v1, tool, dir)
	before := listDir(t, dir)
	runTool(t, ctx, tool, engine, migrated, dir)

	export(t, v2, tool, dir)
	after := listDir(t, dir)
	for name, content := range before {
		if after[name] != content {
			t.Errorf("export changed or removed %s, which the tool already applied", name)
		}
	}
	added := len(after) - len(before)
	if added == 0 {
		t.Fatalf("the grown configuration added no migration")
	}
	runTool(t, ctx, tool, engine, migrated, dir)
	// Exporting the same configuration again adds nothing.
	export(t, v2, tool, dir)
	if n := len(listDir(t, dir)); n != len(after) {
		t.Errorf("a second export of the same configuration added %d files", n-len(after))
	}

	out, err := run(t, migrateCmd(), "--config", v2, "--dsn", fresh.DSN, "--driver", fresh.DriverName)
	if err != nil {
		t.Fatalf("tidemark migrate: %v\n%s", err, out)
	}
	got, want := catalogue(t, ctx, migrated), catalogue(t, ctx, fresh)
	for _, tbl := range []string{"APP_PAYMENT_EVENTS", "APP_PAYMENT_SNAPSHOTS", "APP_PAYMENT_SUMMARY", "PAYMENT_SAGA"} {
		if !strings.Contains(strings.ToUpper(want), "TABLE "+tbl+"\n") {
			t.Fatalf("the fresh database lacks %s:\n%s", tbl, want)
		}
	}
	if got != want {
		t.Errorf("%s after growing differs from tidemark migrate (%d files added):\n%s", tool, added, diffLines(got, want))
	}
}

func openOrSkip(t *testing.T, prov *harness.Provider, engine string) *harness.Database {
	t.Helper()
	db, err := prov.Open(context.Background(), engine, "")
	var sk *harness.Skipped
	if errors.As(err, &sk) {
		t.Skipf("%s: %s", engine, sk.Reason)
	}
	if err != nil {
		t.Fatalf("%s: %v", engine, err)
	}
	return db
}

func writeConfigAs(t *testing.T, dir, name, body string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func export(t *testing.T, cfg, format, dir string) {
	t.Helper()
	if out, err := run(t, schemaCmd(), "--config", cfg, "--format", format, "--out", dir); err != nil {
		t.Fatalf("tidemark schema: %v\n%s", err, out)
	}
}

func listDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = string(b)
	}
	return out
}

// runTool applies every pending migration of dir with the real tool.
func runTool(t *testing.T, ctx context.Context, tool, engine string, target *harness.Database, dir string) {
	t.Helper()
	dsn := target.DSN
	if engine == harness.EngineMariaDB && tool == "golang-migrate" {
		dsn += sep(dsn) + "multiStatements=true" // golang-migrate's mysql driver sends a file at once
	}
	db, err := sql.Open(target.DriverName, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	switch tool {
	case "goose":
		dialects := map[string]goose.Dialect{harness.EnginePostgres: goose.DialectPostgres, harness.EngineMariaDB: goose.DialectMySQL, harness.EngineSQLite: goose.DialectSQLite3}
		p, err := goose.NewProvider(dialects[engine], db, os.DirFS(dir))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Up(ctx); err != nil {
			t.Fatalf("goose up: %v", err)
		}
	case "golang-migrate":
		var drv migratedb.Driver
		switch engine {
		case harness.EnginePostgres:
			drv, err = migratepg.WithInstance(db, &migratepg.Config{})
		case harness.EngineMariaDB:
			drv, err = migratemysql.WithInstance(db, &migratemysql.Config{})
		case harness.EngineSQLite:
			drv, err = migratesqlite.WithInstance(db, &migratesqlite.Config{})
		}
		if err != nil {
			t.Fatal(err)
		}
		src, err := iofs.New(os.DirFS(dir), ".")
		if err != nil {
			t.Fatal(err)
		}
		m, err := migrate.NewWithInstance("iofs", src, engine, drv)
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Up(); err != nil && !errors.Is(err, migrate.ErrNoChange) {
			t.Fatalf("migrate up: %v", err)
		}
	}
}

func sep(dsn string) string {
	if strings.Contains(dsn, "?") {
		return "&"
	}
	return "?"
}

// toolTables are the migration tools' own bookkeeping.
var toolTables = map[string]bool{"goose_db_version": true, "schema_migrations": true}

// catalogueQueries read, per engine: the objects (name, kind), and for a
// table its columns with types and its indexes with their columns.
var catalogueQueries = map[string][3]string{
	harness.EnginePostgres: {
		`SELECT table_name, table_type FROM information_schema.tables WHERE table_schema = current_schema()
		 UNION ALL SELECT sequence_name, 'SEQUENCE ' || data_type || ' ' || start_value || ' ' || increment || ' ' || maximum_value FROM information_schema.sequences WHERE sequence_schema = current_schema()`,
		`SELECT column_name || ' ' || data_type || ' ' || COALESCE(character_maximum_length::text, '') || ' ' || COALESCE(numeric_precision::text, '') || ',' || COALESCE(numeric_scale::text, '') || ' ' || is_nullable || ' ' || COALESCE(column_default, '')
		 FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position`,
		`SELECT indexdef FROM pg_indexes WHERE schemaname = current_schema() AND tablename = $1 ORDER BY indexname`,
	},
	harness.EngineMariaDB: {
		`SELECT table_name, table_type FROM information_schema.tables WHERE table_schema = DATABASE()`,
		`SELECT CONCAT_WS(' ', column_name, column_type, is_nullable, COALESCE(column_default, '-'), extra, COALESCE(collation_name, '-'))
		 FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name = ? ORDER BY ordinal_position`,
		`SELECT CONCAT_WS(' ', index_name, seq_in_index, column_name, non_unique, COALESCE(sub_part, '-'))
		 FROM information_schema.statistics WHERE table_schema = DATABASE() AND table_name = ? ORDER BY index_name, seq_in_index`,
	},
	harness.EngineSQLite: {
		`SELECT name, type FROM sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%'`,
		`SELECT name || ' ' || type || ' ' || "notnull" || ' ' || COALESCE(dflt_value, '-') || ' ' || pk FROM pragma_table_info(?) ORDER BY cid`,
		`SELECT il.name || ' ' || il."unique" || ' ' || il.origin || ' ' || group_concat(ii.name, ',')
		 FROM pragma_index_list(?1) il JOIN pragma_index_info(il.name) ii GROUP BY il.name ORDER BY il.name`,
	},
}

// catalogue renders the database's schema as sorted text: one "TABLE name"
// (or sequence) line per object, then its columns and indexes.
func catalogue(t *testing.T, ctx context.Context, target *harness.Database) string {
	t.Helper()
	db, err := sql.Open(target.DriverName, target.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	q := catalogueQueries[target.Engine]
	objects := map[string]string{}
	rows, err := db.QueryContext(ctx, q[0])
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var name, kind string
		if err := rows.Scan(&name, &kind); err != nil {
			t.Fatal(err)
		}
		if !toolTables[strings.ToLower(name)] {
			objects[name] = kind
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	names := make([]string, 0, len(objects))
	for n := range objects {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		fmt.Fprintf(&b, "TABLE %s\n  kind %s\n", n, objects[n])
		if strings.HasPrefix(objects[n], "SEQUENCE") {
			continue
		}
		for _, part := range []string{q[1], q[2]} {
			for _, line := range strs(t, ctx, db, part, n) {
				fmt.Fprintf(&b, "  %s\n", line)
			}
		}
	}
	return b.String()
}

func strs(t *testing.T, ctx context.Context, db *sql.DB, q string, arg any) []string {
	t.Helper()
	rows, err := db.QueryContext(ctx, q, arg)
	if err != nil {
		t.Fatalf("%v\n%s", err, q)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s sql.NullString
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s.String)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// diffLines reports, per object, what only one side has.
func diffLines(got, want string) string {
	blocks := func(s string) map[string]string {
		m := map[string]string{}
		var name string
		for _, l := range strings.Split(s, "\n") {
			if n, ok := strings.CutPrefix(l, "TABLE "); ok {
				name = n
				continue
			}
			m[name] += l + "\n"
		}
		return m
	}
	g, w := blocks(got), blocks(want)
	var b strings.Builder
	for _, n := range sortedNames(w) {
		switch gb, ok := g[n]; {
		case !ok:
			fmt.Fprintf(&b, "missing after the tool: %s\n", n)
		case gb != w[n]:
			fmt.Fprintf(&b, "%s differs:\n  after the tool:\n%s  tidemark migrate:\n%s", n, gb, w[n])
		}
	}
	for _, n := range sortedNames(g) {
		if _, ok := w[n]; !ok {
			fmt.Fprintf(&b, "only after the tool: %s\n", n)
		}
	}
	return b.String()
}

func sortedNames(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
