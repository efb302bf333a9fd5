package jdbcbridge

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/sqlerr"
	"github.com/tidemarkdb/tidemark/plugins/hsqldb"
)

// opTestHook is the bridge's test-only request (Protocol.OP_TEST_HOOK), refused unless the
// server runs with -Dtidemark.bridge.testHooks=true.
const opTestHook = 200

// lockedBuffer collects a server's stderr.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startHookBridge starts a private bridge that accepts the test hooks, with extra JVM options.
func startHookBridge(t *testing.T, jvmArgs ...string) (*Server, *lockedBuffer) {
	t.Helper()
	if skip := prerequisites(); skip != "" {
		t.Skipf("jdbcbridge tests need Java and the JDBC jars: %s", skip)
	}
	stderr := &lockedBuffer{}
	s, err := StartServer(context.Background(), StartOptions{
		JVMArgs:      append([]string{"-Dtidemark.bridge.testHooks=true"}, jvmArgs...),
		Stderr:       stderr,
		StartTimeout: backstop(2 * time.Minute),
	})
	if err != nil {
		t.Fatalf("start bridge: %v", err)
	}
	t.Cleanup(func() {
		s.Close()
		if t.Failed() {
			t.Logf("bridge stderr:\n%s", stderr.String())
		}
	})
	return s, stderr
}

// testHook sends a test-only request on hc's bridge connection and returns its i32 answer.
func testHook(t *testing.T, hc *sql.Conn, what string) int {
	t.Helper()
	var n int
	err := hc.Raw(func(dc any) error {
		c := dc.(*conn)
		e := c.start(opTestHook)
		e.str(what)
		d, err := c.roundTrip(context.Background(), e)
		if err != nil {
			return err
		}
		n = int(d.i32())
		return d.err
	})
	if err != nil {
		t.Fatalf("test hook %s: %v", what, err)
	}
	return n
}

func hsqldbEngine(t *testing.T) engine {
	for _, e := range engines {
		if e.name == "hsqldb" {
			return e
		}
	}
	t.Fatal("no hsqldb engine")
	return engine{}
}

// staleWait builds HSQLDB's lost wake-up deterministically: session H updates the counter row
// in a transaction, session S's UPDATE of the row waits for H, and H's transaction then ends
// the way HSQLDB's race leaves it (TransactionManagerMVCC.addDeleteAction: S registers on H
// after H's rollback has counted its waiters down): rolled back, with S still registered as
// its waiter and S's latch still up. It returns the channel S's UPDATE answers on and H's
// connection.
func staleWait(t *testing.T, db *sql.DB) (<-chan error, *sql.Conn) {
	t.Helper()
	ctx := context.Background()
	mustExec(t, db, "CREATE TABLE counter (id INT PRIMARY KEY, n INT NOT NULL)")
	mustExec(t, db, "INSERT INTO counter (id, n) VALUES (1, 0)")
	hc, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hc.Close() })
	tx, err := hc.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, "UPDATE counter SET n = n + 1 WHERE id = 1"); err != nil {
		t.Fatal(err)
	}
	// S's context only keeps a broken test from leaking the goroutine for ever.
	sctx, cancel := context.WithTimeout(ctx, backstop(5*time.Minute))
	t.Cleanup(cancel)
	done := make(chan error, 1)
	go func() {
		_, err := db.ExecContext(sctx, "UPDATE counter SET n = n + 10 WHERE id = 1")
		done <- err
	}()
	// Wait until S waits for H (a legitimate wait so far).
	deadline := time.Now().Add(backstop(time.Minute))
	for testHook(t, hc, "waiters") != 1 {
		select {
		case err := <-done:
			t.Fatalf("S's UPDATE returned while H held the row: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("S's UPDATE never waited for H")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n := testHook(t, hc, "rollback-losing-wakeups"); n != 1 {
		t.Fatalf("H's rollback left %d waiters, want 1", n)
	}
	// The bridge has ended the transaction; this only ends it for database/sql.
	if err := tx.Rollback(); err != nil {
		t.Fatalf("rollback: %v", err)
	}
	return done, hc
}

// TestStaleLockWaitIsAborted: a statement left waiting for a transaction that has already
// ended (HSQLDB 2.7's lost wake-up, which hung a conformance test where six workers update one
// counter row) is aborted by the bridge's watchdog with an error the HSQLDB dialect classifies
// as transient, and the retry succeeds. A legitimate wait is left alone.
func TestStaleLockWaitIsAborted(t *testing.T) {
	s, stderr := startHookBridge(t)
	db := hsqldbEngine(t).openOn(t, s)
	done, _ := staleWait(t, db)

	var err error
	select {
	case err = <-done:
	case <-time.After(backstop(time.Minute)):
		t.Fatal("S's UPDATE still waits for a transaction that has ended: the watchdog did not abort it")
	}
	if err == nil {
		t.Fatal("S's UPDATE succeeded; want the watchdog's abort")
	}
	var be *Error
	if !errors.As(err, &be) || be.State != "40502" || !strings.HasPrefix(be.Message, "jdbcbridge: stale lock wait aborted") {
		t.Fatalf("S's UPDATE: %v; want 40502 from the watchdog", err)
	}
	cl, cerr := sqlerr.NewClassifier(hsqldb.Catalogue().Errors)
	if cerr != nil {
		t.Fatal(cerr)
	}
	if w := cl.Wrap(err); !sqlerr.IsTransient(w) || !errors.Is(w, sqlerr.ErrLockTimeout) {
		t.Fatalf("the HSQLDB dialect classifies %v as %q; want a transient lock timeout", err, cl.Classify(err))
	}
	// The caller's own cancel stays a (non-transient) cancel.
	own := &Error{State: "40502", Code: -4872, Message: "statement execution aborted: timeout reached"}
	if got := cl.Classify(own); got != dialect.ErrQueryCanceled {
		t.Fatalf("a plain 40502 classifies as %q, want query_canceled", got)
	}

	// The retry goes through; H's change was rolled back.
	mustExec(t, db, "UPDATE counter SET n = n + 10 WHERE id = 1")
	var n int
	if err := db.QueryRow("SELECT n FROM counter WHERE id = 1").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 10 {
		t.Fatalf("counter = %d, want 10", n)
	}
	deadline := time.Now().Add(backstop(time.Minute))
	for !strings.Contains(stderr.String(), "waited for a transaction that had already ended") {
		if time.Now().After(deadline) {
			t.Fatal("the watchdog logged nothing")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestLegitimateLockWaitIsNotAborted: a statement waiting for a live transaction is left
// waiting by the watchdog (over several of its checks) and goes through once that ends.
func TestLegitimateLockWaitIsNotAborted(t *testing.T) {
	s, stderr := startHookBridge(t)
	db := hsqldbEngine(t).openOn(t, s)
	ctx := context.Background()
	mustExec(t, db, "CREATE TABLE counter (id INT PRIMARY KEY, n INT NOT NULL)")
	mustExec(t, db, "INSERT INTO counter (id, n) VALUES (1, 0)")
	hc, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer hc.Close()
	tx, err := hc.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, tx, "UPDATE counter SET n = n + 1 WHERE id = 1")
	done := make(chan error, 1)
	go func() {
		_, err := db.ExecContext(ctx, "UPDATE counter SET n = n + 10 WHERE id = 1")
		done <- err
	}()
	deadline := time.Now().Add(backstop(time.Minute))
	for testHook(t, hc, "waiters") != 1 {
		if time.Now().After(deadline) {
			t.Fatal("S's UPDATE never waited for H")
		}
		time.Sleep(10 * time.Millisecond)
	}
	// Several watchdog periods (StaleWaits.PERIOD_MS = 500 ms): only a wrong abort ends it.
	select {
	case err := <-done:
		t.Fatalf("S's UPDATE returned while H's transaction was live: %v", err)
	case <-time.After(2 * time.Second):
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("S's UPDATE after H's commit: %v", err)
		}
	case <-time.After(backstop(time.Minute)):
		t.Fatal("S's UPDATE still waits after H's commit")
	}
	if strings.Contains(stderr.String(), "waited for a transaction that had already ended") {
		t.Fatal("the watchdog fired on a legitimate wait")
	}
}

// TestStaleLockWaitHangsWithoutWatchdog shows what the watchdog is for: with it disabled the
// same state hangs S until H's next transaction ends (here, one started only to release it).
func TestStaleLockWaitHangsWithoutWatchdog(t *testing.T) {
	s, _ := startHookBridge(t, "-Dtidemark.bridge.staleWaitWatchdog=false")
	db := hsqldbEngine(t).openOn(t, s)
	done, hc := staleWait(t, db)
	// Six watchdog periods: with the watchdog it would have returned by now.
	select {
	case err := <-done:
		t.Fatalf("S's UPDATE returned without the watchdog (%v): the stale state was not built", err)
	case <-time.After(3 * time.Second):
	}
	// H's next transaction end counts its waiters down: S goes through.
	if _, err := hc.ExecContext(context.Background(), "UPDATE counter SET n = n WHERE id = 2"); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("S's UPDATE after H's next transaction: %v", err)
		}
	case <-time.After(backstop(time.Minute)):
		t.Fatal("S's UPDATE still waits after H's next transaction")
	}
}
