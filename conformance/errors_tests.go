package conformance

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/sqlerr"
	"github.com/tidemarkdb/tidemark/internal/testtime"
)

// The errors group provokes real errors on the engine, through the plugin's
// catalogue and the engine's own entry points (Exec, ExecText), and checks
// that each comes back classified: errors.Is with the class sentinel, the
// transient marker where the class is retryable, and the driver's own error
// still reachable with errors.As.
func errorsTests() []Test {
	return []Test{
		{"errors/unique_violation", testErrUnique},
		{"errors/not_null_violation", testErrNotNull},
		{"errors/foreign_key_violation", testErrForeignKey},
		{"errors/deadlock", testErrDeadlock},
		{"errors/lock_timeout", testErrLockTimeout},
		{"errors/read_only_transaction", testErrReadOnly},
		{"errors/store_paths_classified", testErrStoreClassified},
	}
}

// errGuard bounds every test of the group: a guard against a hang (an
// engine that never detects the deadlock), not a timed assertion.
const errGuard = 2 * time.Minute

// expectClass checks that err is of class (and of no other class the group
// provokes), that IsTransient agrees with the class, and that the driver's
// error is reachable: errors.As to its own dynamic type finds it, and its
// SQLSTATE or vendor code is readable.
func expectClass(t T, err error, want *sqlerr.ClassError, what string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: no error", what)
	}
	if !errors.Is(err, want) {
		t.Fatalf("%s: errors.Is(err, %s) is false; read %+v from %T: %v", what, want.Class, sqlerr.Extract(err), err, err)
	}
	for _, other := range []*sqlerr.ClassError{sqlerr.ErrDeadlock, sqlerr.ErrLockTimeout, sqlerr.ErrSerializationFailure,
		sqlerr.ErrNotNullViolation, sqlerr.ErrForeignKeyViolation, sqlerr.ErrReadOnly, sqlerr.ErrConnectionLost} {
		if other != want && errors.Is(err, other) {
			t.Errorf("%s: also errors.Is(err, %s)", what, other.Class)
		}
	}
	if got := sqlerr.IsTransient(err); got != sqlerr.TransientClass(want.Class) {
		t.Errorf("%s: IsTransient = %v, want %v for %s", what, got, !got, want.Class)
	}
	var se *sqlerr.Error
	if !errors.As(err, &se) || se.Err == nil {
		t.Fatalf("%s: not an *sqlerr.Error: %T", what, err)
	}
	driverErr := innermost(se.Err)
	ptr := reflect.New(reflect.TypeOf(driverErr))
	if !errors.As(err, ptr.Interface()) {
		t.Errorf("%s: errors.As(err, *%T) is false", what, driverErr)
	}
	d := sqlerr.Extract(se.Err)
	if d.SQLState == "" && !d.HasVendor {
		t.Errorf("%s: no SQLSTATE or vendor code readable from the driver's %T: %v", what, driverErr, driverErr)
	}
	t.Logf("%s: %s from %T (SQLSTATE %q, codes %v, constraint %q): %v", what, se.Class, driverErr, d.SQLState, d.VendorCodes, d.Constraint, err)
}

// innermost follows Unwrap() error to the last error of the chain: the
// driver's.
func innermost(err error) error {
	for {
		u := errors.Unwrap(err)
		if u == nil {
			return err
		}
		err = u
	}
}

func snapshotArgs(id, aggregateID string, seq int64, payload any) map[string]any {
	return map[string]any{"id": id, "aggregate_id": aggregateID, "aggregate_type": "bank.Account",
		"sequence_no": seq, "snapshot_version": 1, "payload": payload, "created_at": time.Now().UTC()}
}

func newID(t T) string {
	t.Helper()
	id, err := uuid.NewV7()
	if err != nil {
		t.Fatal(err)
	}
	return id.String()
}

func testErrUnique(t T, env *Env) {
	e := openEngine(t, env, defaultConfig(env))
	ctx, cancel := testtime.Context(context.Background(), errGuard)
	defer cancel()
	if _, err := e.Exec(ctx, e.DB, dialect.SnapshotInsert, nil, snapshotArgs(newID(t), "acc-unique", 3, `{}`)); err != nil {
		t.Fatalf("first snapshot: %v", err)
	}
	// Same (aggregate_id, sequence_no), another id: the UNIQUE constraint,
	// not the primary key, so a unique violation and not a duplicate id.
	_, err := e.Exec(ctx, e.DB, dialect.SnapshotInsert, nil, snapshotArgs(newID(t), "acc-unique", 3, `{}`))
	expectClass(t, err, sqlerr.ErrUniqueViolation, "second snapshot at the same sequence")
	if errors.Is(err, sqlerr.ErrDuplicateEvent) {
		t.Errorf("a UNIQUE (aggregate_id, sequence_no) violation classified as a duplicate id (constraint %q)", sqlerr.Extract(err).Constraint)
	}
}

func testErrNotNull(t T, env *Env) {
	e := openEngine(t, env, defaultConfig(env))
	ctx, cancel := testtime.Context(context.Background(), errGuard)
	defer cancel()
	_, err := e.Exec(ctx, e.DB, dialect.SnapshotInsert, nil, snapshotArgs(newID(t), "acc-null", 1, nil))
	expectClass(t, err, sqlerr.ErrNotNullViolation, "snapshot with a NULL payload")
}

// fkInsert writes a checkpoint of a consumer that does not exist; the spec
// names the constraint fk_${consumer_checkpoints_table}_consumer.
const fkInsert = `INSERT INTO ${consumer_checkpoints_table} (consumer_id, source_name, partition_no) VALUES (#{consumer_id}, #{source_name}, #{partition_no})`

func testErrForeignKey(t T, env *Env) {
	e := openEngine(t, env, defaultConfig(env))
	ctx, cancel := testtime.Context(context.Background(), errGuard)
	defer cancel()
	_, err := e.ExecText(ctx, e.DB, fkInsert, nil, map[string]any{"consumer_id": newID(t), "source_name": "s", "partition_no": 0})
	expectClass(t, err, sqlerr.ErrForeignKeyViolation, "checkpoint of a missing consumer")
	// Where the engine names the constraint, the name is read, not the message.
	if c := sqlerr.Extract(err).Constraint; c != "" && !strings.Contains(strings.ToLower(c), "fk_") {
		t.Errorf("constraint name %q read from %v, want the spec's fk_…_consumer", c, err)
	}
}

// seedTopics inserts high-water-mark rows: rows every engine locks with the
// catalogue's HWMAcquire (an UPDATE of one row).
func seedTopics(ctx context.Context, t T, e *engine.Engine, topics ...string) {
	t.Helper()
	for _, tp := range topics {
		if _, err := e.Exec(ctx, e.DB, dialect.HWMSeed, nil, map[string]any{"topic": tp}); err != nil {
			t.Fatalf("seeding %s: %v", tp, err)
		}
	}
}

func acquire(ctx context.Context, e *engine.Engine, q engine.Querier, topic string) error {
	_, err := e.Exec(ctx, q, dialect.HWMAcquire, nil, map[string]any{"topic": topic, "owner": "errors-test", "lease_millis": 60000})
	return err
}

type txResult struct {
	n   int
	err error
}

func testErrDeadlock(t T, env *Env) {
	if env.Catalogue.Locks.SerializesWriters {
		skipf(t, "%s serialises writers with one database lock taken at BEGIN (Locks.SerializesWriters): two transactions never each hold a lock the other waits for; a busy lock is errors/lock_timeout", env.Catalogue.Identity.Name)
	}
	e := openEngine(t, env, defaultConfig(env))
	ctx, cancel := testtime.Context(context.Background(), errGuard)
	defer cancel()
	seedTopics(ctx, t, e, "errors-a", "errors-b")
	var txs [2]*sql.Tx
	for i := range txs {
		tx, err := e.DB.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		txs[i] = tx
	}
	if err := acquire(ctx, e, txs[0], "errors-a"); err != nil {
		t.Fatal(err)
	}
	if err := acquire(ctx, e, txs[1], "errors-b"); err != nil {
		t.Fatal(err)
	}
	// Each now waits for the row the other holds: the engine must pick a
	// victim. The survivor goes on once the victim's locks are gone.
	results := make(chan txResult, 2)
	go func() { results <- txResult{0, acquire(ctx, e, txs[0], "errors-b")} }()
	go func() { results <- txResult{1, acquire(ctx, e, txs[1], "errors-a")} }()
	first := <-results
	if first.err == nil {
		// The survivor returned first: the engine had already rolled the
		// victim back; its error is still to come.
		first = <-results
	} else {
		// Roll the victim back (PostgreSQL only aborts it) so the survivor
		// can go on.
		_ = txs[first.n].Rollback()
		if second := <-results; second.err != nil {
			t.Logf("the other transaction failed too: %v", second.err)
		}
	}
	if ctx.Err() != nil {
		t.Fatalf("no deadlock detected within the %s guard: %v", errGuard, first.err)
	}
	want := sqlerr.ErrDeadlock
	if !hasRule(env.Catalogue, dialect.ErrDeadlock) {
		// HSQLDB reports a deadlock with the standard's 40001 "serialization
		// failure" and has no code of its own for it.
		want = sqlerr.ErrSerializationFailure
		t.Logf("%s has no deadlock rule: a deadlock is reported as a serialization failure", env.Catalogue.Identity.Name)
	}
	expectClass(t, first.err, want, fmt.Sprintf("transaction %d of two locking two rows in opposite order", first.n+1))
}

func hasRule(c dialect.Catalogue, class dialect.ErrorClass) bool {
	for _, r := range c.Errors {
		if r.Class == class {
			return true
		}
	}
	return false
}

// sessionLockTimeouts are the engines' statements that bound one session's
// lock wait; the first the engine accepts is used. PostgreSQL and H2:
// lock_timeout in ms; MySQL/MariaDB: innodb_lock_wait_timeout in s (1 is
// its minimum); SQL Server: LOCK_TIMEOUT in ms; SQLite: busy_timeout in ms.
var sessionLockTimeouts = []string{
	"SET lock_timeout = 500",
	"SET SESSION innodb_lock_wait_timeout = 1",
	"SET LOCK_TIMEOUT 500",
	"PRAGMA busy_timeout = 500",
}

// setSessionLockTimeout bounds conn's lock waits with the catalogue's
// Locks.SessionLockTimeout, or, when it declares none, the first of
// sessionLockTimeouts the engine accepts. It returns the statement that
// ran, or "" and why each was refused.
func setSessionLockTimeout(ctx context.Context, cat dialect.Catalogue, conn *sql.Conn) (string, []string) {
	forms := sessionLockTimeouts
	if cat.Locks.SessionLockTimeout != "" {
		forms = []string{cat.Locks.SessionLockTimeout}
	}
	var refused []string
	for _, s := range forms {
		if _, err := conn.ExecContext(ctx, s); err != nil {
			refused = append(refused, firstLine(err.Error()))
			continue
		}
		return s, nil
	}
	return "", refused
}

func testErrLockTimeout(t T, env *Env) {
	e := openEngine(t, env, defaultConfig(env))
	ctx, cancel := testtime.Context(context.Background(), errGuard)
	defer cancel()
	seedTopics(ctx, t, e, "errors-lock")
	conn, err := e.DB.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	setting, refused := setSessionLockTimeout(ctx, env.Catalogue, conn)
	if setting == "" {
		skipf(t, "%s declares no Locks.SessionLockTimeout and accepts none of the session lock-timeout settings the suite knows (%s): no per-session lock timeout", env.Catalogue.Identity.Name, strings.Join(refused, "; "))
	}
	tx, err := e.DB.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if err := acquire(ctx, e, tx, "errors-lock"); err != nil {
		t.Fatal(err)
	}
	err = acquire(ctx, e, conn, "errors-lock")
	if ctx.Err() != nil {
		t.Fatalf("the lock wait outlived the %s guard despite %q", errGuard, setting)
	}
	expectClass(t, err, sqlerr.ErrLockTimeout, "waiting for a row another transaction holds, after "+setting)
}

var notSupported = regexp.MustCompile(`(?i)not supported|unsupported`)

func testErrReadOnly(t T, env *Env) {
	e := openEngine(t, env, defaultConfig(env))
	ctx, cancel := testtime.Context(context.Background(), errGuard)
	defer cancel()
	tx, err := e.DB.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil && notSupported.MatchString(err.Error()) {
		skipf(t, "the driver refuses read-only transactions: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	_, err = e.Exec(ctx, tx, dialect.SnapshotInsert, nil, snapshotArgs(newID(t), "acc-ro", 1, `{}`))
	if err == nil {
		skipf(t, "%s (driver %s) accepted a write in a sql.TxOptions{ReadOnly: true} transaction: the engine has no read-only transaction (ReadOnly is a hint there)", env.Catalogue.Identity.Name, env.Driver)
	}
	expectClass(t, err, sqlerr.ErrReadOnly, "INSERT in a READ ONLY transaction")
}
