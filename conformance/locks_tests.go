package conformance

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/sqlerr"
	"github.com/tidemarkdb/tidemark/internal/testtime"
)

// The locks and clock groups prove, on the real engine, what a catalogue's
// LockForms declares: ForUpdate locks a row until the transaction ends,
// SkipLocked passes over rows another transaction holds, and Now is the
// database clock in UTC. No core code reads them yet; the durable consumers
// and partition leases to come (row locks, SKIP LOCKED claims, expiry on the
// database clock) will, so the declarations must hold before then. Waits
// are shown with a per-session lock timeout (errors/lock_timeout's
// settings), never by measuring time.
func locksTests() []Test {
	return []Test{
		{"locks/for_update_blocks", testForUpdateBlocks},
		{"locks/skip_locked_skips", testSkipLockedSkips},
		{"clock/now_utc", testNowUTC},
	}
}

// lockRowQuery selects one high-water-mark row; the test appends the
// catalogue's ForUpdate (and " SKIP LOCKED").
const lockRowQuery = `SELECT topic_name FROM ${high_water_mark_store_table} WHERE topic_name = #{topic}`

// waiterConn returns a connection whose lock waits end with a lock timeout
// (setSessionLockTimeout), or skips.
func waiterConn(ctx context.Context, t T, env *Env, e *engine.Engine) (*sql.Conn, string) {
	t.Helper()
	conn, err := e.DB.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	s, refused := setSessionLockTimeout(ctx, env.Catalogue, conn)
	if s == "" {
		skipf(t, "%s declares no Locks.SessionLockTimeout and accepts none of the session lock-timeout settings the suite knows (%s): a wait cannot be shown without timing it", env.Catalogue.Identity.Name, strings.Join(refused, "; "))
	}
	return conn, s
}

// selectTopics runs query (binds a, b or topic) on q and returns the
// topic_name of every row; the error is classified.
func selectTopics(ctx context.Context, e *engine.Engine, q engine.Querier, query string, args map[string]any) ([]string, error) {
	c, err := e.CompileText(query, nil)
	if err != nil {
		return nil, err
	}
	a, err := c.Args(args)
	if err != nil {
		return nil, err
	}
	rows, err := q.QueryContext(ctx, c.SQL, a...)
	if err != nil {
		return nil, e.Errors.Wrap(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, e.Errors.Wrap(err)
		}
		out = append(out, s)
	}
	return out, e.Errors.Wrap(rows.Err())
}

// testForUpdateBlocks: a row selected with ForUpdate is held until the
// transaction ends. A second transaction's SELECT … ForUpdate of the same
// row takes it while nobody holds it, ends in a lock timeout while the
// first holds it, and takes it again once the first has committed.
func testForUpdateBlocks(t T, env *Env) {
	lf := env.Catalogue.Locks
	if lf.ForUpdate == "" {
		skipf(t, "%s declares no Locks.ForUpdate (serialises writers: %v): it has no SELECT suffix that holds a row lock", env.Catalogue.Identity.Name, lf.SerializesWriters)
	}
	e := openEngine(t, env, defaultConfig(env))
	ctx, cancel := testtime.Context(context.Background(), errGuard)
	defer cancel()
	seedTopics(ctx, t, e, "locks-a")
	conn, setting := waiterConn(ctx, t, env, e)
	query := lockRowQuery + lf.ForUpdate
	args := map[string]any{"topic": "locks-a"}
	takeOnConn := func(what string) error {
		tx, err := conn.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		got, err := selectTopics(ctx, e, tx, query, args)
		if err == nil && len(got) != 1 {
			t.Fatalf("%s: %v rows, want the one row", what, got)
		}
		return err
	}
	if err := takeOnConn("with no holder"); err != nil {
		t.Fatalf("SELECT …%s of a row nobody holds, after %q: %v", lf.ForUpdate, setting, err)
	}
	holder, err := e.DB.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Rollback()
	if _, err := selectTopics(ctx, e, holder, query, args); err != nil {
		t.Fatalf("the holder's SELECT …%s: %v", lf.ForUpdate, err)
	}
	err = takeOnConn("while held")
	if ctx.Err() != nil {
		t.Fatalf("the lock wait outlived the %s guard despite %q", errGuard, setting)
	}
	if err == nil {
		t.Fatalf("a second SELECT …%s took the row another open transaction had selected with it: %q does not lock", lf.ForUpdate, lf.ForUpdate)
	}
	expectClass(t, err, sqlerr.ErrLockTimeout, fmt.Sprintf("SELECT …%s of a held row, after %s", lf.ForUpdate, setting))
	if err := holder.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := takeOnConn("after the holder committed"); err != nil {
		t.Fatalf("the row is still held after the holder committed: %v", err)
	}
}

// testSkipLockedSkips: with SkipLocked declared, ForUpdate + " SKIP LOCKED"
// returns the rows nobody holds and passes over the held one without
// waiting (a wait would end in the session's lock timeout).
func testSkipLockedSkips(t T, env *Env) {
	lf := env.Catalogue.Locks
	if !lf.SkipLocked || lf.ForUpdate == "" {
		skipf(t, "%s declares no SKIP LOCKED (Locks.SkipLocked %v, ForUpdate %q)", env.Catalogue.Identity.Name, lf.SkipLocked, lf.ForUpdate)
	}
	e := openEngine(t, env, defaultConfig(env))
	ctx, cancel := testtime.Context(context.Background(), errGuard)
	defer cancel()
	seedTopics(ctx, t, e, "locks-a", "locks-b")
	conn, setting := waiterConn(ctx, t, env, e)
	holder, err := e.DB.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Rollback()
	if _, err := selectTopics(ctx, e, holder, lockRowQuery+lf.ForUpdate, map[string]any{"topic": "locks-a"}); err != nil {
		t.Fatalf("the holder's SELECT …%s: %v", lf.ForUpdate, err)
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	both := `SELECT topic_name FROM ${high_water_mark_store_table} WHERE topic_name IN (#{a}, #{b}) ORDER BY topic_name` + lf.ForUpdate + " SKIP LOCKED"
	got, err := selectTopics(ctx, e, tx, both, map[string]any{"a": "locks-a", "b": "locks-b"})
	if err != nil {
		t.Fatalf("SELECT …%s SKIP LOCKED with one of two rows held (after %s): %v", lf.ForUpdate, setting, err)
	}
	if strings.Join(got, ",") != "locks-b" {
		t.Fatalf("SELECT …%s SKIP LOCKED returned %v, want only the row nobody holds [locks-b]", lf.ForUpdate, got)
	}
	// The skipped row is free again once its holder ends.
	if err := holder.Commit(); err != nil {
		t.Fatal(err)
	}
	_ = tx.Rollback()
	got, err = selectTopics(ctx, e, conn, both, map[string]any{"a": "locks-a", "b": "locks-b"})
	if err != nil || strings.Join(got, ",") != "locks-a,locks-b" {
		t.Fatalf("after the holder committed: %v, %v; want [locks-a locks-b]", got, err)
	}
}

// sessionTimeZones put a session in a zone 5 h 45 min east of UTC, the
// first the engine accepts, so a clock expression that follows the session
// zone instead of UTC is off by hours. PostgreSQL and H2: SET TIME ZONE;
// MySQL/MariaDB: time_zone; HSQLDB: an interval. SQLite has no session
// zone (its clock is always UTC).
var sessionTimeZones = []string{
	"SET TIME ZONE 'Asia/Kathmandu'",
	"SET time_zone = '+05:45'",
	"SET TIME ZONE INTERVAL '+05:45' HOUR TO MINUTE",
}

// clockSlack is how far the database clock may stand from this process's:
// the same machine, or a server with a synchronised clock. A zone mistake
// is a multiple of 15 minutes (5 h 45 min here), far outside it.
const clockSlack = 2 * time.Minute

// testNowUTC: Locks.Now, read twice in one transaction on a session whose
// time zone is not UTC, is the database clock in UTC both times (within
// clockSlack of this process's UTC clock, read before and after) and does
// not go back.
func testNowUTC(t T, env *Env) {
	now := env.Catalogue.Locks.Now
	if now == "" {
		t.Fatalf("%s declares no Locks.Now", env.Catalogue.Identity.Name)
	}
	e := openEngine(t, env, defaultConfig(env))
	ctx, cancel := testtime.Context(context.Background(), errGuard)
	defer cancel()
	seedTopics(ctx, t, e, "clock")
	conn, err := e.DB.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	zone := "the session's own"
	for _, s := range sessionTimeZones {
		if _, err := conn.ExecContext(ctx, s); err == nil {
			zone = s
			break
		}
	}
	c, err := e.CompileText(`SELECT `+now+` FROM ${high_water_mark_store_table} WHERE topic_name = #{topic}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	args, err := c.Args(map[string]any{"topic": "clock"})
	if err != nil {
		t.Fatal(err)
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	before := time.Now().UTC()
	var reads [2]time.Time
	for i := range reads {
		var v any
		if err := tx.QueryRowContext(ctx, c.SQL, args...).Scan(&v); err != nil {
			t.Fatalf("SELECT %s: %v", now, e.Errors.Wrap(err))
		}
		if reads[i], err = instant(v); err != nil {
			t.Fatalf("SELECT %s returned %T %v: %v", now, v, v, err)
		}
	}
	after := time.Now().UTC()
	for i, r := range reads {
		if r.Before(before.Add(-clockSlack)) || r.After(after.Add(clockSlack)) {
			t.Errorf("read %d of %s with %s: %s, this process's UTC clock %s … %s: not the database clock in UTC (off by %s)",
				i+1, now, zone, r.Format(time.RFC3339Nano), before.Format(time.RFC3339Nano), after.Format(time.RFC3339Nano), r.Sub(before).Round(time.Minute))
		}
	}
	if reads[1].Before(reads[0]) {
		t.Errorf("%s went back within one transaction: %s, then %s", now, reads[0], reads[1])
	}
	t.Logf("%s with %s: %s, %s (this process: %s)", now, zone, reads[0].Format(time.RFC3339Nano), reads[1].Format(time.RFC3339Nano), before.Format(time.RFC3339Nano))
}

// instantLayouts are the text forms a driver may return a timestamp in; a
// form without a zone is read as UTC, the stored form the catalogue
// promises for columns without one.
var instantLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999-07",
	"2006-01-02 15:04:05.999999999",
}

// instant reads a database timestamp: a time.Time as the driver gives it
// (with its zone, or UTC for a type without one), or text in one of
// instantLayouts.
func instant(v any) (time.Time, error) {
	switch x := v.(type) {
	case time.Time:
		return x, nil
	case []byte:
		return instant(string(x))
	case string:
		for _, l := range instantLayouts {
			if ts, err := time.Parse(l, strings.TrimSpace(x)); err == nil {
				return ts, nil
			}
		}
		return time.Time{}, fmt.Errorf("no timestamp layout matches %q", x)
	}
	return time.Time{}, fmt.Errorf("not a timestamp")
}
