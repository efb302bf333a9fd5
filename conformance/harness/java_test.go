package harness

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidemarkdb/tidemark/internal/testtime"
	"github.com/tidemarkdb/tidemark/jdbcbridge"
)

func javaTableCount(t *testing.T, h *sql.DB) int {
	t.Helper()
	var n int
	q := "SELECT COUNT(*) FROM INFORMATION_SCHEMA.TABLES WHERE TABLE_SCHEMA = CURRENT_SCHEMA AND TABLE_TYPE = 'BASE TABLE'"
	if err := h.QueryRow(q).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

// TestJavaEnginesFreshAndShared: every Open is a new empty database, and two
// pools on one DSN see the same database (the in-memory database outlives
// its connections).
func TestJavaEnginesFreshAndShared(t *testing.T) {
	p := NewProvider()
	defer p.Close()
	for _, engine := range []string{EngineH2, EngineHSQLDB} {
		t.Run(engine, func(t *testing.T) {
			a := openOrSkip(t, p, engine, "jdbcbridge")
			b := openOrSkip(t, p, engine, "jdbcbridge")
			if a.DSN == b.DSN {
				t.Fatalf("two Opens returned the same DSN %q", a.DSN)
			}
			ha, hb := sqlOpen(t, a), sqlOpen(t, b)
			if n := javaTableCount(t, ha); n != 0 {
				t.Fatalf("fresh database has %d tables", n)
			}
			if _, err := ha.Exec("CREATE TABLE t_isolation (id INTEGER PRIMARY KEY)"); err != nil {
				t.Fatal(err)
			}
			if _, err := ha.Exec("INSERT INTO t_isolation VALUES (1)"); err != nil {
				t.Fatal(err)
			}
			if n := javaTableCount(t, hb); n != 0 {
				t.Fatalf("second database sees %d tables of the first", n)
			}
			// Another pool, with every connection of the first closed.
			ha.Close()
			hc := sqlOpen(t, a)
			var n int
			if err := hc.QueryRow("SELECT COUNT(*) FROM t_isolation").Scan(&n); err != nil || n != 1 {
				t.Fatalf("second pool on the same DSN: %d rows, %v", n, err)
			}
			if engine == EngineH2 {
				var ms int
				if err := hc.QueryRow("SELECT LOCK_TIMEOUT()").Scan(&ms); err != nil || ms != H2LockTimeoutMillis {
					t.Errorf("H2 session lock timeout %d ms (%v), want %d", ms, err, H2LockTimeoutMillis)
				}
			}
			if engine == EngineHSQLDB {
				var mode string
				if err := hc.QueryRow("SELECT PROPERTY_VALUE FROM INFORMATION_SCHEMA.SYSTEM_PROPERTIES WHERE PROPERTY_NAME = 'hsqldb.tx'").Scan(&mode); err != nil || !strings.EqualFold(mode, "mvcc") {
					t.Errorf("HSQLDB transaction mode %q (%v), want mvcc", mode, err)
				}
			}
		})
	}
}

// TestJavaEnginesConcurrentOpens: concurrent first Opens start one bridge.
func TestJavaEnginesConcurrentOpens(t *testing.T) {
	if err := CloseJavaEngines(); err != nil {
		t.Fatal(err)
	}
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
			dbs[i], errs[i] = p.Open(context.Background(), []string{EngineH2, EngineHSQLDB}[i%2], "jdbcbridge")
		}()
	}
	wg.Wait()
	seen := map[string]bool{}
	var addr string
	for i := range n {
		var sk *Skipped
		if errors.As(errs[i], &sk) {
			t.Skip(sk.Reason)
		}
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		cfg, err := jdbcbridge.ParseDSN(dbs[i].DSN)
		if err != nil {
			t.Fatal(err)
		}
		if addr == "" {
			addr = cfg.Addr
		}
		if cfg.Addr != addr {
			t.Fatalf("two bridges: %s and %s", addr, cfg.Addr)
		}
		if seen[cfg.URL] {
			t.Fatalf("JDBC URL handed out twice: %s", cfg.URL)
		}
		seen[cfg.URL] = true
	}
	// After CloseJavaEngines the next Open starts a new bridge.
	if err := CloseJavaEngines(); err != nil {
		t.Fatal(err)
	}
	if accepting(addr) {
		t.Fatalf("bridge at %s still accepting after CloseJavaEngines", addr)
	}
	db := openOrSkip(t, p, EngineH2, "jdbcbridge")
	h := sqlOpen(t, db)
	if err := h.Ping(); err != nil {
		t.Fatal(err)
	}
}

// TestJavaBridgeDiesWithProcess starts the bridge in a child test process,
// kills the child with SIGKILL and checks that the bridge stops listening.
func TestJavaBridgeDiesWithProcess(t *testing.T) {
	if os.Getenv("TM_HARNESS_JAVA_CHILD") == "1" {
		db, err := NewProvider().Open(context.Background(), EngineH2, "jdbcbridge")
		var sk *Skipped
		switch {
		case errors.As(err, &sk):
			fmt.Println("CHILD-SKIP", sk.Reason)
		case err != nil:
			fmt.Println("CHILD-SKIP open failed:", err)
		default:
			cfg, _ := jdbcbridge.ParseDSN(db.DSN)
			fmt.Println("CHILD-READY", cfg.Addr)
		}
		select {} // wait to be killed
	}
	if testing.Short() {
		t.Skip("short")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestJavaBridgeDiesWithProcess$", "-test.v")
	cmd.Env = append(os.Environ(), "TM_HARNESS_JAVA_CHILD=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	var addr string
	sc := bufio.NewScanner(out)
	for addr == "" && sc.Scan() {
		line := sc.Text()
		if f, ok := strings.CutPrefix(line, "CHILD-SKIP "); ok {
			cmd.Process.Kill()
			cmd.Wait()
			t.Skip(f)
		}
		if f, ok := strings.CutPrefix(line, "CHILD-READY "); ok {
			addr = f
		}
	}
	if addr == "" || !accepting(addr) {
		t.Fatalf("child did not report a listening bridge (%q)", addr)
	}
	cmd.Process.Kill()
	cmd.Wait()
	deadline := testtime.Deadline(10 * time.Second)
	for accepting(addr) {
		if time.Now().After(deadline) {
			t.Fatalf("bridge at %s still accepting 10 s after the test process died", addr)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
