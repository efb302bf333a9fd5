package jdbcbridge

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

var (
	bridgeOnce sync.Once
	bridge     *Server
	bridgeErr  error
	bridgeSkip string
	dbCounter  atomic.Int64
)

func TestMain(m *testing.M) {
	code := m.Run()
	if bridge != nil {
		bridge.Close()
	}
	if adminBridge != nil {
		adminBridge.Close()
	}
	os.Exit(code)
}

// prerequisites returns a skip reason when java, javac or a jar is missing.
func prerequisites() string {
	if _, _, err := FindJava(); err != nil {
		return err.Error()
	}
	for _, j := range []string{H2Jar(), HSQLDBJar()} {
		if _, err := os.Stat(j); err != nil {
			return fmt.Sprintf("JDBC jar %s missing (install libh2-java libhsqldb-java or set TIDEMARK_H2_JAR/TIDEMARK_HSQLDB_JAR): %v", j, err)
		}
	}
	return ""
}

// startBridge returns the package's shared bridge server, skipping the test with a clear reason
// when Java or the jars are not installed.
func startBridge(tb testing.TB) *Server {
	tb.Helper()
	bridgeOnce.Do(func() {
		if bridgeSkip = prerequisites(); bridgeSkip != "" {
			return
		}
		bridge, bridgeErr = StartServer(context.Background(), StartOptions{Stderr: os.Stderr})
	})
	if bridgeSkip != "" {
		tb.Skipf("jdbcbridge tests need Java and the JDBC jars: %s", bridgeSkip)
	}
	if bridgeErr != nil {
		tb.Fatalf("start bridge: %v", bridgeErr)
	}
	return bridge
}

var (
	adminOnce   sync.Once
	adminBridge *Server
	adminErr    error
)

// startAdminBridge returns a second shared server whose in-memory sessions keep admin rights,
// for tests that must watch other sessions (INFORMATION_SCHEMA.SESSIONS shows a user without
// admin rights only its own).
func startAdminBridge(tb testing.TB) *Server {
	tb.Helper()
	startBridge(tb)
	adminOnce.Do(func() {
		adminBridge, adminErr = StartServer(context.Background(), StartOptions{AdminSessions: true, Stderr: os.Stderr})
	})
	if adminErr != nil {
		tb.Fatalf("start admin bridge: %v", adminErr)
	}
	return adminBridge
}

// backstop scales a generous wait by TIDEMARK_TEST_TIME_SCALE (default 1): a bound that only
// stops a test that would otherwise hang, never one a loaded machine should reach.
func backstop(d time.Duration) time.Duration {
	if f, err := strconv.ParseFloat(os.Getenv("TIDEMARK_TEST_TIME_SCALE"), 64); err == nil && f > 1 {
		return time.Duration(float64(d) * f)
	}
	return d
}

// testDSN is s.DSN with the harness's session settings: a dialTimeout of a minute (scaled),
// not the driver's 10 s, which a session took longer than at load 20 on 2 cores.
func testDSN(s *Server, jdbcURL, user, password string) string {
	cfg := Config{Addr: s.Addr, URL: jdbcURL, User: user, Password: password, Token: s.Token, DialTimeout: backstop(time.Minute)}
	return cfg.FormatDSN()
}

// engine describes one database behind the bridge.
type engine struct {
	name      string
	user      string
	selectOne string
	url       func(db string) string
}

var engines = []engine{
	{
		name: "h2", user: "sa", selectOne: "SELECT 1",
		url: func(db string) string { return "jdbc:h2:mem:" + db + ";DB_CLOSE_DELAY=-1" },
	},
	{
		name: "hsqldb", user: "SA", selectOne: "VALUES (1)",
		url: func(db string) string { return "jdbc:hsqldb:mem:" + db + ";hsqldb.tx=mvcc" },
	},
}

// open returns a *sql.DB on a fresh in-memory database of engine e.
func (e engine) open(tb testing.TB, extra ...string) *sql.DB {
	tb.Helper()
	return e.openOn(tb, startBridge(tb), extra...)
}

// openOn is open on server s.
func (e engine) openOn(tb testing.TB, s *Server, extra ...string) *sql.DB {
	tb.Helper()
	name := fmt.Sprintf("t%d_%s", dbCounter.Add(1), strings.ToLower(strings.NewReplacer("/", "_", " ", "_", "#", "_").Replace(tb.Name())))
	dsn := testDSN(s, e.url(name), e.user, "")
	for _, x := range extra {
		dsn += "&" + x
	}
	db, err := sql.Open("jdbcbridge", dsn)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), backstop(2*time.Minute))
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		tb.Fatalf("ping %s: %v", e.name, err)
	}
	return db
}

func forEngines(t *testing.T, f func(t *testing.T, e engine)) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) { f(t, e) })
	}
}

func mustExec(tb testing.TB, db interface {
	ExecContext(context.Context, string, ...any) (sql.Result, error)
}, q string, args ...any) sql.Result {
	tb.Helper()
	r, err := db.ExecContext(context.Background(), q, args...)
	if err != nil {
		tb.Fatalf("%s: %v", q, err)
	}
	return r
}
