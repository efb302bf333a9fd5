// Package enginetest runs a dialect catalogue on a real engine behind the JDBC
// bridge: the DDL twice, the position counter under concurrent appends, and
// the error rules against errors the engine really raises. The tests skip when
// Java or the engine's jar is missing. ClassifyMessages checks the error rules
// on messages copied from the engine, without one.
//
// A plugin's test package describes its engine once in an Engine, calls Main
// from its TestMain, and keeps one thin test function per check.
package enginetest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/sqlerr"
	"github.com/tidemarkdb/tidemark/internal/ddlgolden"
	"github.com/tidemarkdb/tidemark/internal/testtime"
	"github.com/tidemarkdb/tidemark/jdbcbridge"
)

// Engine describes an in-memory JDBC engine and the catalogue under test.
type Engine struct {
	// Name names the engine in messages, e.g. "H2".
	Name string
	// Jar returns the path of the engine's jar, e.g. jdbcbridge.H2Jar.
	Jar func() string
	// DBPrefix starts the name of every test database, e.g. "h2test".
	DBPrefix string
	// URL returns the JDBC URL of a new in-memory database called name.
	URL func(name string) string
	// User is the database user; the password is empty.
	User string
	// Catalogue returns the dialect's catalogue.
	Catalogue func() dialect.Catalogue
	// LockTimeout, when not empty, is the statement that sets a connection's
	// lock timeout to 100 ms; ErrorRules then also checks that a lock wait
	// classifies as dialect.ErrLockTimeout.
	LockTimeout string
}

// The bridges started so far, one per jar, closed by Main.
var (
	bridgesMu sync.Mutex
	bridges   = map[string]*bridgeState{}
	dbSeq     int
)

type bridgeState struct {
	server *jdbcbridge.Server
	err    error
}

// Main runs the tests of m and then closes the bridges they started.
func Main(m *testing.M) {
	code := m.Run()
	bridgesMu.Lock()
	for _, b := range bridges {
		if b.server != nil {
			b.server.Close()
		}
	}
	bridgesMu.Unlock()
	os.Exit(code)
}

// bridge returns the bridge serving e's jar, starting it on first use.
func (e Engine) bridge() (*jdbcbridge.Server, error) {
	jar := e.Jar()
	bridgesMu.Lock()
	defer bridgesMu.Unlock()
	if b, ok := bridges[jar]; ok {
		return b.server, b.err
	}
	b := &bridgeState{}
	bridges[jar] = b
	if _, _, err := jdbcbridge.FindJava(); err != nil {
		b.err = err
	} else if _, err := os.Stat(jar); err != nil {
		b.err = err
	} else {
		b.server, b.err = jdbcbridge.StartServer(context.Background(), jdbcbridge.StartOptions{ClassPath: []string{jar}})
	}
	return b.server, b.err
}

// Open returns a new in-memory database of e, shut down when the test ends;
// it skips the test when there is no bridge.
func (e Engine) Open(t *testing.T) *sql.DB {
	t.Helper()
	bridge, err := e.bridge()
	if bridge == nil {
		t.Skipf("no JDBC bridge for %s: %v", e.Name, err)
	}
	bridgesMu.Lock()
	dbSeq++
	name := fmt.Sprintf("%s_%d_%d", e.DBPrefix, os.Getpid(), dbSeq)
	bridgesMu.Unlock()
	db, err := sql.Open("jdbcbridge", BridgeDSN(bridge, e.URL(name), e.User))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = db.Exec("SHUTDOWN")
		db.Close()
	})
	return db
}

// stmt fills a catalogue statement with the spec's example names and
// compiles it to '?' placeholders.
func (e Engine) stmt(t *testing.T, id dialect.StatementID, extra map[string]string) dialect.Compiled {
	t.Helper()
	names := ddlgolden.ExampleNames()
	for k, v := range extra {
		names[k] = v
	}
	filled, err := dialect.Fill(e.Catalogue().Statements[id], names)
	if err != nil {
		t.Fatal(err)
	}
	return dialect.Compile(filled, dialect.PlaceholderQuestion)
}

// createSchema runs every script of the catalogue with upper-case example
// names.
func (e Engine) createSchema(t *testing.T, db *sql.DB) {
	t.Helper()
	stmts, _, _, err := ddlgolden.Statements(e.Catalogue(), "upper")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%v\n%s", err, s)
		}
	}
}

// DDLIdempotent runs the DDL twice, then once more after moving the event
// store's counter, and checks the counter keeps its value.
func DDLIdempotent(t *testing.T, e Engine) {
	db := e.Open(t)
	ddlgolden.RunTwice(t, db, e.Catalogue(), "upper")
	if _, err := db.Exec("UPDATE EVENT_STORE_GLOBAL_POSITION SET val = 42 WHERE id = 1"); err != nil {
		t.Fatal(err)
	}
	e.createSchema(t, db)
	var v int64
	if err := db.QueryRow("SELECT val FROM EVENT_STORE_GLOBAL_POSITION WHERE id = 1").Scan(&v); err != nil || v != 42 {
		t.Fatalf("counter after re-run: %d, %v", v, err)
	}
}

// allocate runs position.allocate (and position.allocated when the first
// returns no row) in tx and returns the new counter value.
func (e Engine) allocate(t *testing.T, tx *sql.Tx, n int) (int64, error) {
	pos := map[string]string{"position_table": "EVENT_STORE_GLOBAL_POSITION"}
	var end int64
	c := e.stmt(t, dialect.PositionAllocate, pos)
	args, _ := c.Args(map[string]any{"count": n})
	if e.Catalogue().Statements[dialect.PositionAllocated] == "" {
		return end, tx.QueryRow(c.SQL, args...).Scan(&end)
	}
	if _, err := tx.Exec(c.SQL, args...); err != nil {
		return 0, err
	}
	return end, tx.QueryRow(e.stmt(t, dialect.PositionAllocated, pos).SQL).Scan(&end)
}

func (e Engine) committedEnd(t *testing.T, db *sql.DB) int64 {
	t.Helper()
	var v int64
	if err := db.QueryRow(e.stmt(t, dialect.CommittedEnd, map[string]string{"position_table": "EVENT_STORE_GLOBAL_POSITION"}).SQL).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// PositionAllocateHoldsTheCounter checks that a second allocation waits for
// the first transaction and then builds on its committed value; a plain read
// never waits and sees only committed values; a rollback restores the
// counter.
func PositionAllocateHoldsTheCounter(t *testing.T, e Engine) {
	db := e.Open(t)
	e.createSchema(t, db)
	tx1, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if end, err := e.allocate(t, tx1, 5); err != nil || end != 5 {
		t.Fatalf("first allocation: %d, %v", end, err)
	}
	if v := e.committedEnd(t, db); v != 0 {
		t.Fatalf("committed end while the append is open: %d, want 0", v)
	}
	type result struct {
		end int64
		err error
	}
	second := make(chan result, 1)
	go func() {
		tx2, err := db.Begin()
		if err != nil {
			second <- result{err: err}
			return
		}
		end, err := e.allocate(t, tx2, 3)
		if err == nil {
			err = tx2.Commit()
		} else {
			_ = tx2.Rollback()
		}
		second <- result{end, err}
	}()
	if err := tx1.Commit(); err != nil {
		t.Fatal(err)
	}
	// If the second allocation had not waited for the first, it would have
	// returned 3 (or failed); waiting, it adds to the committed 5.
	if r := <-second; r.err != nil || r.end != 8 {
		t.Fatalf("second allocation: %d, %v; want 8", r.end, r.err)
	}
	tx3, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if end, err := e.allocate(t, tx3, 2); err != nil || end != 10 {
		t.Fatalf("third allocation: %d, %v", end, err)
	}
	if err := tx3.Rollback(); err != nil {
		t.Fatal(err)
	}
	if v := e.committedEnd(t, db); v != 8 {
		t.Fatalf("committed end after rollback: %d, want 8", v)
	}
}

// ErrorRules classifies errors raised by the real engine.
func ErrorRules(t *testing.T, e Engine) {
	db := e.Open(t)
	e.createSchema(t, db)
	cl, err := sqlerr.NewClassifier(e.Catalogue().Errors)
	if err != nil {
		t.Fatal(err)
	}
	ins := e.Catalogue().EventInsert
	filled, err := dialect.Fill(ins.Head+ins.Row+ins.Tail, ddlgolden.ExampleNames())
	if err != nil {
		t.Fatal(err)
	}
	insert := dialect.Compile(filled, dialect.PlaceholderQuestion)
	row := func(id string, seq int64) []any {
		a, err := insert.Args(map[string]any{"id": id, "aggregate_id": "acc-1", "aggregate_type": "bank.Account",
			"sequence_no": seq, "event_type": "Opened", "event_revision": 0, "payload": `{}`, "metadata": nil,
			"occurred_at": "2026-01-01 00:00:00", "partition_key": 1, "global_position": seq + 1})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	const id1, id2 = "0190a0a0-0000-7000-8000-000000000001", "0190a0a0-0000-7000-8000-000000000002"
	if _, err := db.Exec(insert.SQL, row(id1, 0)...); err != nil {
		t.Fatal(err)
	}
	type errCase struct {
		name string
		err  error
		want dialect.ErrorClass
	}
	var cases []errCase
	_, err = db.Exec(insert.SQL, row(id1, 1)...)
	cases = append(cases, errCase{"same event id", err, dialect.ErrDuplicateEventID})
	_, err = db.Exec(insert.SQL, row(id2, 0)...)
	cases = append(cases, errCase{"same aggregate and sequence", err, dialect.ErrUniqueViolation})
	_, err = db.Exec(`INSERT INTO CONSUMER_CHECKPOINTS (consumer_id, source_name, partition_no) VALUES ('nope', 's', 0)`)
	cases = append(cases, errCase{"missing consumer", err, dialect.ErrForeignKeyViolation})
	_, err = db.Exec(`SELECT * FROM NO_SUCH_TABLE`)
	cases = append(cases, errCase{"missing table", err, dialect.ErrUndefinedTable})
	if e.LockTimeout != "" {
		cases = append(cases, errCase{"lock wait", e.lockTimeout(t, db), dialect.ErrLockTimeout})
	}
	for _, c := range cases {
		if c.err == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		var je *jdbcbridge.Error
		if !errors.As(c.err, &je) {
			t.Errorf("%s: %T %v", c.name, c.err, c.err)
		}
		if got := cl.Classify(c.err); got != c.want {
			t.Errorf("%s: classified %q, want %q (%v)", c.name, got, c.want, c.err)
		}
	}
}

// lockTimeout holds the counter row in one transaction and returns the error
// of a second connection, with a 100 ms lock timeout, that waits for it.
func (e Engine) lockTimeout(t *testing.T, db *sql.DB) error {
	t.Helper()
	ctx := context.Background()
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := e.allocate(t, tx, 1); err != nil {
		t.Fatal(err)
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, e.LockTimeout); err != nil {
		t.Fatal(err)
	}
	_, err = conn.ExecContext(ctx, "UPDATE EVENT_STORE_GLOBAL_POSITION SET val = val + 1 WHERE id = 1")
	return err
}

// MessageCase is an error as the engine words it and the class the
// catalogue's error rules must give it ("" for none).
type MessageCase struct {
	Err  error
	Want dialect.ErrorClass
}

// ClassifyMessages checks the catalogue's error rules on errors copied from
// the engine, without an engine.
func ClassifyMessages(t *testing.T, c dialect.Catalogue, cases []MessageCase) {
	t.Helper()
	cl, err := sqlerr.NewClassifier(c.Errors)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		if got := cl.Classify(c.Err); got != c.Want {
			t.Errorf("%q: %q, want %q", c.Err, got, c.Want)
		}
	}
}

// BridgeDSN is s.DSN with the harness's session settings: a dial timeout of
// a minute scaled by the machine's load (testtime), not the driver's 10 s,
// which a session's handshake can take longer than on a loaded machine.
func BridgeDSN(s *jdbcbridge.Server, jdbcURL, user string) string {
	cfg := jdbcbridge.Config{Addr: s.Addr, URL: jdbcURL, User: user, Token: s.Token, DialTimeout: testtime.D(time.Minute)}
	return cfg.FormatDSN()
}
