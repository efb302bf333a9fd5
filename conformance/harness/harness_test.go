package harness

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/tidemarkdb/tidemark/internal/testtime"
)

// openOrSkip opens engine/driver from p, skipping the test with the Skipped
// reason when the engine is unavailable.
func openOrSkip(t *testing.T, p *Provider, engine, driver string) *Database {
	t.Helper()
	ctx, cancel := testtime.Context(context.Background(), 2*time.Minute)
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
	ctx, cancel := testtime.Context(context.Background(), 5*time.Minute)
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

// TestProbeDockerIsQuick points DOCKER_HOST at a listener that never
// answers: the probe must give up within its timeout with a reason.
func TestProbeDockerIsQuick(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			defer c.Close() // hold it open, say nothing
		}
	}()
	for _, host := range []string{"tcp://" + l.Addr().String(), "unix:///nonexistent/docker.sock"} {
		t.Setenv("DOCKER_HOST", host)
		// The probe scales its timeout by the load when it starts; the
		// scale read on either side of it bounds the one it used.
		before := testtime.D(dockerPingTimeout)
		start := time.Now()
		_, err := probeDocker()
		d := time.Since(start)
		if !isNotInstalled(err) {
			t.Fatalf("%s: want notInstalled, got %v", host, err)
		}
		if limit := max(before, testtime.D(dockerPingTimeout)) + 2*time.Second; d > limit {
			t.Fatalf("%s: probe took %v", host, d)
		}
		t.Logf("%s: %v after %v", host, err, d.Round(time.Millisecond))
	}
}

// TestEnvDSN feeds the DSN of a harness-started server back in through the
// environment and checks that Opens get fresh databases that Close drops.
func TestEnvDSN(t *testing.T) {
	for _, c := range []struct{ engine, driver, env string }{
		{EnginePostgres, "pgx", "TIDEMARK_POSTGRES_DSN"},
		{EngineMariaDB, "mysql", "TIDEMARK_MARIADB_DSN"},
	} {
		t.Run(c.engine, func(t *testing.T) {
			if os.Getenv(c.env) != "" {
				t.Skip(c.env + " is set already")
			}
			local := NewProvider()
			defer local.Close()
			base := openOrSkip(t, local, c.engine, c.driver)
			t.Setenv(c.env, base.DSN)
			p := NewProvider()
			a, b := checkFreshAndIsolated(t, p, c.engine, c.driver)
			if a.Source != "env "+c.env || a.Note != "" {
				t.Fatalf("source %q note %q", a.Source, a.Note)
			}
			names := []string{tmName(t, a.DSN), tmName(t, b.DSN)}
			if err := p.Close(); err != nil {
				t.Fatal(err)
			}
			h := sqlOpen(t, base)
			var q string
			if c.engine == EnginePostgres {
				q = "SELECT count(*) FROM pg_database WHERE datname IN ($1, $2)"
			} else {
				q = "SELECT count(*) FROM information_schema.schemata WHERE schema_name IN (?, ?)"
			}
			var n int
			if err := h.QueryRow(q, names[0], names[1]).Scan(&n); err != nil || n != 0 {
				t.Fatalf("databases left after Close: %d, %v", n, err)
			}
		})
	}
}

func tmName(t *testing.T, dsn string) string {
	t.Helper()
	i := strings.Index(dsn, "tm_")
	if i < 0 || len(dsn) < i+19 {
		t.Fatalf("no tm_ name in %q", dsn)
	}
	return dsn[i : i+19]
}

// TestServersDieWithProcess starts servers in a child test process, kills
// it with SIGKILL and checks that its servers stop listening (Pdeathsig) and
// that the next Provider sweeps its temporary directories.
func TestServersDieWithProcess(t *testing.T) {
	if os.Getenv("TM_HARNESS_CHILD") == "1" {
		childMain()
		return
	}
	if testing.Short() {
		t.Skip("short")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestServersDieWithProcess$", "-test.v")
	cmd.Env = append(os.Environ(), "TM_HARNESS_CHILD=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	var addrs, dirs []string
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		line := sc.Text()
		if f, ok := strings.CutPrefix(line, "CHILD-SKIP "); ok {
			cmd.Process.Kill()
			cmd.Wait()
			t.Skip(f)
		}
		if f, ok := strings.CutPrefix(line, "CHILD-READY "); ok {
			for _, kv := range strings.Fields(f) {
				a, d, _ := strings.Cut(kv, ",")
				addrs, dirs = append(addrs, a), append(dirs, d)
			}
			break
		}
	}
	if len(addrs) == 0 {
		t.Fatal("child did not report its servers")
	}
	for _, a := range addrs {
		if !accepting(a) {
			t.Fatalf("%s not accepting before the kill", a)
		}
	}
	cmd.Process.Kill()
	cmd.Wait()
	deadline := testtime.Deadline(10 * time.Second)
	for _, a := range addrs {
		for accepting(a) {
			if time.Now().After(deadline) {
				t.Fatalf("%s still accepting 10 s after the test process died", a)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	sweepStaleNow()
	for _, d := range dirs {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Fatalf("%s not swept: %v", d, err)
		}
	}
	t.Logf("servers at %v died with their process; dirs swept", addrs)
}

func childMain() {
	p := NewProvider()
	var report []string
	for _, e := range []string{EnginePostgres, EngineMariaDB} {
		db, err := p.Open(context.Background(), e, "")
		var sk *Skipped
		if errors.As(err, &sk) {
			continue
		}
		if err != nil {
			fmt.Println("CHILD-SKIP open failed:", err)
			select {}
		}
		var dir string
		switch s := p.slots[e].srv.(type) {
		case *pgServer:
			dir = s.dir
		case borrowed:
			dir = s.server.(*mysqlServer).dir
		}
		var addr string
		if e == EnginePostgres {
			u, _ := url.Parse(db.DSN)
			addr = u.Host
		} else {
			cfg, _ := mysql.ParseDSN(db.DSN)
			addr = cfg.Addr
		}
		report = append(report, addr+","+dir)
	}
	if len(report) == 0 {
		fmt.Println("CHILD-SKIP no local servers")
	} else {
		fmt.Println("CHILD-READY " + strings.Join(report, " "))
	}
	select {} // wait to be killed
}

// TestConcurrentOpens opens one engine from many goroutines at once: they
// must share a single server and each get their own database.
func TestConcurrentOpens(t *testing.T) {
	p := NewProvider()
	defer p.Close()
	const n = 6
	dbs := make([]*Database, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dbs[i], errs[i] = p.Open(context.Background(), EnginePostgres, "pgx")
		}()
	}
	wg.Wait()
	seen := map[string]bool{}
	for i := range n {
		var sk *Skipped
		if errors.As(errs[i], &sk) {
			t.Skip(sk.Reason)
		}
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if dbs[i].Source != dbs[0].Source || portOf(t, dbs[i]) != portOf(t, dbs[0]) {
			t.Fatalf("different servers: %s vs %s", dbs[i].DSN, dbs[0].DSN)
		}
		if seen[dbs[i].DSN] {
			t.Fatalf("DSN handed out twice: %s", dbs[i].DSN)
		}
		seen[dbs[i].DSN] = true
	}
}
