package harness

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidemarkdb/tidemark/internal/testtime"
)

// fbUserTables counts the user tables of a Firebird database.
func fbUserTables(t *testing.T, h *sql.DB) int {
	t.Helper()
	var n int
	q := "SELECT COUNT(*) FROM RDB$RELATIONS WHERE COALESCE(RDB$SYSTEM_FLAG, 0) = 0"
	if err := h.QueryRow(q).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

// TestFirebirdFreshAndIsolated: every Open is a new, empty database file on
// the one server the harness started; a table made in one is not seen in
// another; the server is Firebird 3 and the database is UTF8.
func TestFirebirdFreshAndIsolated(t *testing.T) {
	p := NewProvider()
	defer p.Close()
	a := openOrSkip(t, p, EngineFirebird, "firebirdsql")
	b := openOrSkip(t, p, EngineFirebird, "firebirdsql")
	if a.DSN == b.DSN {
		t.Fatalf("two Opens returned the same DSN %q", a.DSN)
	}
	ha, hb := sqlOpen(t, a), sqlOpen(t, b)
	var version, charset string
	if err := ha.QueryRow("SELECT rdb$get_context('SYSTEM', 'ENGINE_VERSION') FROM rdb$database").Scan(&version); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(version, "3.") {
		t.Errorf("engine version %s, want 3.x", version)
	}
	if err := ha.QueryRow("SELECT TRIM(RDB$CHARACTER_SET_NAME) FROM RDB$DATABASE").Scan(&charset); err != nil || charset != "UTF8" {
		t.Errorf("default character set %q (%v), want UTF8", charset, err)
	}
	if n := fbUserTables(t, ha); n != 0 {
		t.Fatalf("fresh database has %d tables", n)
	}
	if _, err := ha.Exec("CREATE TABLE t_isolation (id INTEGER NOT NULL PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	if n := fbUserTables(t, ha); n != 1 {
		t.Fatalf("after CREATE TABLE: %d tables", n)
	}
	if n := fbUserTables(t, hb); n != 0 {
		t.Fatalf("second database sees %d tables of the first", n)
	}
	addr := fbAddr(a.DSN)
	ha.Close()
	hb.Close()
	if err := p.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if accepting(addr) {
		t.Fatalf("%s still accepting after Provider.Close", addr)
	}
}

// fbAddr returns host:port of a firebirdsql DSN user:pw@host:port/path.
func fbAddr(dsn string) string {
	_, rest, _ := strings.Cut(dsn, "@")
	addr, _, _ := strings.Cut(rest, "/")
	return addr
}

// TestFirebirdDiesWithProcess starts a child test process that opens a
// Firebird database and waits; killing the child (SIGKILL, no Close) must
// take the server down with it, and the next sweep removes its directory.
func TestFirebirdDiesWithProcess(t *testing.T) {
	if os.Getenv("TM_FIREBIRD_CHILD") == "1" {
		fbChildMain()
		return
	}
	if testing.Short() {
		t.Skip("-short: this test starts and kills a Firebird server in a child process")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestFirebirdDiesWithProcess$", "-test.v")
	cmd.Env = append(os.Environ(), "TM_FIREBIRD_CHILD=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	var addr, dir string
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		line := sc.Text()
		if f, ok := strings.CutPrefix(line, "CHILD-SKIP "); ok {
			cmd.Process.Kill()
			cmd.Wait()
			t.Skip(f)
		}
		if f, ok := strings.CutPrefix(line, "CHILD-FAIL "); ok {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatal(f)
		}
		if f, ok := strings.CutPrefix(line, "CHILD-READY "); ok {
			addr, dir, _ = strings.Cut(f, ",")
			break
		}
	}
	if addr == "" {
		t.Fatal("child did not report its server")
	}
	if !accepting(addr) {
		t.Fatalf("%s not accepting before the kill", addr)
	}
	cmd.Process.Kill()
	cmd.Wait()
	deadline := testtime.Deadline(10 * time.Second)
	for accepting(addr) {
		if time.Now().After(deadline) {
			t.Fatalf("%s still accepting 10 s after the test process died", addr)
		}
		time.Sleep(100 * time.Millisecond)
	}
	sweepStaleNow()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("%s not swept: %v", dir, err)
	}
	t.Logf("Firebird at %s died with its process; %s swept", addr, dir)
}

func fbChildMain() {
	p := NewProvider()
	ctx, cancel := testtime.Context(context.Background(), 2*time.Minute)
	defer cancel()
	db, err := p.Open(ctx, EngineFirebird, "")
	var sk *Skipped
	switch {
	case errors.As(err, &sk):
		fmt.Println("CHILD-SKIP " + sk.Reason)
	case err != nil:
		fmt.Println("CHILD-FAIL " + strings.ReplaceAll(err.Error(), "\n", " | "))
	default:
		s := p.slots[EngineFirebird].srv.(*fbServer)
		fmt.Println("CHILD-READY " + fbAddr(db.DSN) + "," + s.dir)
	}
	select {} // wait to be killed
}

// withFbRoots points the Firebird lookup at roots for one test.
func withFbRoots(t *testing.T, roots ...string) {
	t.Helper()
	old := fbRoots
	fbRoots = roots
	t.Cleanup(func() { fbRoots = old })
}

// TestFirebirdNotInstalledSkips: no installation is a *Skipped whose reason
// says what is missing and how to install it.
func TestFirebirdNotInstalledSkips(t *testing.T) {
	t.Setenv("TIDEMARK_REQUIRE_ENGINES", "") // this test hides the installation on purpose
	withFbRoots(t, filepath.Join(t.TempDir(), "none"))
	p := NewProvider()
	defer p.Close()
	_, err := p.Open(context.Background(), EngineFirebird, "")
	var sk *Skipped
	if !errors.As(err, &sk) {
		t.Fatalf("want *Skipped, got %v", err)
	}
	if !strings.Contains(sk.Reason, "Firebird 3 is not installed") || !strings.Contains(sk.Reason, "setup-debian.sh firebird3.0-server") {
		t.Errorf("reason does not say what is missing and how to install it: %s", sk.Reason)
	}
}

// TestFirebirdBrokenIsAnError: an installation whose server exits at once
// is a real error naming the server, not a skip.
func TestFirebirdBrokenIsAnError(t *testing.T) {
	root := t.TempDir()
	for _, f := range []struct{ path, body string }{
		{"plugins/libEngine12.so", ""},
		{"bin/isql", "#!/bin/sh\ncat >/dev/null\nexit 0\n"},
		{"bin/firebird", "#!/bin/sh\necho 'cannot start: broken on purpose' >&2\nexit 3\n"},
	} {
		p := filepath.Join(root, f.path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(f.body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	withFbRoots(t, root)
	p := NewProvider()
	defer p.Close()
	_, err := p.Open(context.Background(), EngineFirebird, "")
	var sk *Skipped
	if err == nil || errors.As(err, &sk) {
		t.Fatalf("want a real error, got %v", err)
	}
	if !strings.Contains(err.Error(), "failed to start") || !strings.Contains(err.Error(), "broken on purpose") {
		t.Errorf("error does not say the server failed and why: %v", err)
	}
}
