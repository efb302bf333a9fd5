package harness

import (
	"context"
	"database/sql"
	"errors"
	"net"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

// openOrSkip opens engine/driver from p, skipping the test with the Skipped
// reason when the engine is unavailable.
func openOrSkip(t *testing.T, p *Provider, engine, driver string) *Database {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	start := time.Now()
	db, err := p.Open(ctx, engine, driver)
	var sk *Skipped
	if errors.As(err, &sk) {
		t.Skip(sk.Reason)
	}
	if err != nil {
		t.Fatalf("Open(%s, %s): %v", engine, driver, err)
	}
	t.Logf("%s/%s: %s (Open took %v)", engine, driver, db.Source, time.Since(start).Round(time.Millisecond))
	if db.Note != "" {
		t.Logf("note: %s", db.Note)
	}
	if db.Engine != engine || db.DriverName != driver || db.DSN == "" || db.Source == "" {
		t.Fatalf("bad Database: %+v", db)
	}
	return db
}

func sqlOpen(t *testing.T, db *Database) *sql.DB {
	t.Helper()
	h, err := sql.Open(db.DriverName, db.DSN)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

// tableCount counts the tables in the current database or schema.
func tableCount(t *testing.T, h *sql.DB, engine string) int {
	t.Helper()
	var q string
	switch engine {
	case EnginePostgres:
		q = "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'"
	case EngineMariaDB, EngineMySQL:
		q = "SELECT count(*) FROM information_schema.tables WHERE table_schema = DATABASE()"
	case EngineSQLite:
		q = "SELECT count(*) FROM sqlite_master WHERE type = 'table'"
	case EngineSQLServer:
		q = "SELECT count(*) FROM INFORMATION_SCHEMA.TABLES"
	}
	var n int
	if err := h.QueryRow(q).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

// checkFreshAndIsolated runs a trivial query on two Opens and shows that
// they are different, empty databases.
func checkFreshAndIsolated(t *testing.T, p *Provider, engine, driver string) (*Database, *Database) {
	a := openOrSkip(t, p, engine, driver)
	b := openOrSkip(t, p, engine, driver)
	if a.DSN == b.DSN {
		t.Fatalf("two Opens returned the same DSN %q", a.DSN)
	}
	ha, hb := sqlOpen(t, a), sqlOpen(t, b)
	var one int
	if err := ha.QueryRow("SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("SELECT 1: %v, %d", err, one)
	}
	if n := tableCount(t, ha, engine); n != 0 {
		t.Fatalf("fresh database has %d tables", n)
	}
	if _, err := ha.Exec("CREATE TABLE t_isolation (id INTEGER PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	if n := tableCount(t, ha, engine); n != 1 {
		t.Fatalf("after CREATE TABLE: %d tables", n)
	}
	if n := tableCount(t, hb, engine); n != 0 {
		t.Fatalf("second database sees %d tables of the first", n)
	}
	return a, b
}

// portOf returns host:port of a server DSN, or "" for socket/file DSNs.
func portOf(t *testing.T, db *Database) string {
	t.Helper()
	switch db.Engine {
	case EnginePostgres:
		u, err := url.Parse(db.DSN)
		if err != nil {
			return ""
		}
		return u.Host
	case EngineMariaDB, EngineMySQL:
		cfg, err := mysql.ParseDSN(db.DSN)
		if err != nil || cfg.Net != "tcp" {
			return ""
		}
		return cfg.Addr
	}
	return ""
}

func accepting(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

func TestPostgresBothDrivers(t *testing.T) {
	p := NewProvider()
	var addr string
	for _, driver := range []string{"pgx", "postgres"} {
		t.Run(driver, func(t *testing.T) {
			a, _ := checkFreshAndIsolated(t, p, EnginePostgres, driver)
			addr = portOf(t, a)
			var enc string
			if err := sqlOpen(t, a).QueryRow("SHOW server_encoding").Scan(&enc); err != nil || enc != "UTF8" {
				t.Fatalf("server_encoding %q, %v", enc, err)
			}
		})
	}
	checkClosed(t, p, addr)
}

func TestMariaDB(t *testing.T) {
	p := NewProvider()
	a, _ := checkFreshAndIsolated(t, p, EngineMariaDB, "mysql")
	h := sqlOpen(t, a)
	var cs, coll, csServer, tz string
	if err := h.QueryRow("SELECT @@character_set_connection, @@collation_connection, @@character_set_server, @@session.time_zone").Scan(&cs, &coll, &csServer, &tz); err != nil {
		t.Fatal(err)
	}
	t.Logf("connection %s/%s, server default %s, time_zone %s", cs, coll, csServer, tz)
	if cs != "utf8mb4" || coll != "utf8mb4_bin" || tz != "+00:00" {
		t.Fatalf("connection charset %s collation %s time_zone %s", cs, coll, tz)
	}
	if os.Getenv("TIDEMARK_MARIADB_DSN") == "" && strings.HasPrefix(a.Source, "local server") && csServer != "latin1" {
		t.Fatalf("local server must keep its latin1 default, has %s", csServer)
	}
	checkClosed(t, p, portOf(t, a))
}

func TestMySQL(t *testing.T) {
	p := NewProvider()
	defer p.Close()
	a, _ := checkFreshAndIsolated(t, p, EngineMySQL, "mysql")
	if strings.Contains(a.Source, "MariaDB") && a.Note == "" {
		t.Fatalf("MariaDB standing in for MySQL without a Note: %+v", a)
	}
}

func TestSQLite(t *testing.T) {
	p := NewProvider()
	a, _ := checkFreshAndIsolated(t, p, EngineSQLite, "sqlite")
	h := sqlOpen(t, a)
	var mode string
	if err := h.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		t.Fatalf("journal_mode %q, %v", mode, err)
	}

	// Concurrent writers queue instead of failing with SQLITE_BUSY.
	if _, err := h.Exec("CREATE TABLE c (n INTEGER)"); err != nil {
		t.Fatal(err)
	}
	h.SetMaxOpenConns(8)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 25; i++ {
				tx, err := h.Begin()
				if err != nil {
					errs <- err
					return
				}
				var n int
				if err := tx.QueryRow("SELECT count(*) FROM c").Scan(&n); err != nil {
					tx.Rollback()
					errs <- err
					return
				}
				if _, err := tx.Exec("INSERT INTO c VALUES (?)", n); err != nil {
					tx.Rollback()
					errs <- err
					return
				}
				if err := tx.Commit(); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("concurrent writer: %v", err)
	}
	var n int
	if err := h.QueryRow("SELECT count(*) FROM c").Scan(&n); err != nil || n != 200 {
		t.Fatalf("count %d, %v", n, err)
	}
	path := strings.SplitN(a.DSN, "?", 2)[0]
	h.Close()
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("sqlite file survives Close: %v", err)
	}
}

// checkClosed closes p and checks that the server stopped listening.
func checkClosed(t *testing.T, p *Provider, addr string) {
	t.Helper()
	start := time.Now()
	if err := p.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	t.Logf("Close took %v", time.Since(start).Round(time.Millisecond))
	if addr == "" || t.Skipped() {
		return
	}
	if strings.Contains(os.Getenv("TIDEMARK_POSTGRES_DSN")+os.Getenv("TIDEMARK_MARIADB_DSN"), addr) {
		return // not our server
	}
	if accepting(addr) {
		t.Fatalf("%s still accepts connections after Close", addr)
	}
}

func TestJavaEnginesUnwired(t *testing.T) {
	if JavaEngines != nil {
		t.Skip("JavaEngines is wired")
	}
	p := NewProvider()
	defer p.Close()
	for _, e := range []string{EngineH2, EngineHSQLDB} {
		_, err := p.Open(context.Background(), e, "jdbcbridge")
		var sk *Skipped
		if !errors.As(err, &sk) || !strings.Contains(sk.Reason, "JDBC bridge not wired") {
			t.Fatalf("%s: want Skipped, got %v", e, err)
		}
	}
}

// TestSQLServerOrSkip shows that an engine with no source is a quick,
// explained skip (here, without a DSN, through the Docker probe).
func TestSQLServerOrSkip(t *testing.T) {
	p := NewProvider()
	defer p.Close()
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	db, err := p.Open(ctx, EngineSQLServer, "sqlserver")
	var sk *Skipped
	if errors.As(err, &sk) {
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("finding out took %v", d)
		}
		if !strings.Contains(sk.Reason, "Docker") {
			t.Errorf("reason does not mention Docker: %q", sk.Reason)
		}
		t.Skip(sk.Reason)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("sqlserver: %s", db.Source)
}

func TestBadDriverAndEngine(t *testing.T) {
	p := NewProvider()
	defer p.Close()
	var sk *Skipped
	if _, err := p.Open(context.Background(), "oracle", ""); err == nil || errors.As(err, &sk) {
		t.Fatalf("unknown engine: %v", err)
	}
	if _, err := p.Open(context.Background(), EnginePostgres, "mysql"); err == nil || errors.As(err, &sk) {
		t.Fatalf("wrong driver: %v", err)
	}
}

func TestDSNRewrites(t *testing.T) {
	for _, c := range [][3]string{
		{"postgres://u:p@h:5/db?sslmode=disable", "tm_x", "postgres://u:p@h:5/tm_x?sslmode=disable"},
		{"host=h port=5 dbname=db user=u", "tm_x", "host=h port=5 dbname=tm_x user=u"},
		{"host=h user=u", "tm_x", "host=h user=u dbname=tm_x"},
	} {
		got, err := withPgDatabase(c[0], c[1])
		if err != nil || got != c[2] {
			t.Errorf("withPgDatabase(%q) = %q, %v; want %q", c[0], got, err, c[2])
		}
	}
	for _, c := range [][3]string{
		{"sqlserver://sa:p@h:1433?database=master", "tm_x", "sqlserver://sa:p@h:1433?database=tm_x"},
		{"server=h;user id=sa;database=master", "tm_x", "server=h;user id=sa;database=tm_x"},
	} {
		got, err := withMSSQLDatabase(c[0], c[1])
		if err != nil || got != c[2] {
			t.Errorf("withMSSQLDatabase(%q) = %q, %v; want %q", c[0], got, err, c[2])
		}
	}
}
