package postgres_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/tidemarkdb/tidemark/conformance/harness"
	"github.com/tidemarkdb/tidemark/core/dialect/plugin"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/eventstore"
	"github.com/tidemarkdb/tidemark/core/hwm"
	"github.com/tidemarkdb/tidemark/internal/testtime"
	"github.com/tidemarkdb/tidemark/plugins/postgres"
)

// These tests need several databases and roles of one real cluster, which
// the dialect-neutral conformance suite cannot create: they cover the
// PostgreSQL side of the per-database horizon (xid.oldest_holder).

var prov *harness.Provider

func TestMain(m *testing.M) {
	prov = harness.NewProvider()
	code := m.Run()
	prov.Close()
	os.Exit(code)
}

// fresh returns a new database of the harness's cluster (superuser DSN).
func fresh(t *testing.T) *harness.Database {
	t.Helper()
	d, err := prov.Open(context.Background(), harness.EnginePostgres, "pgx")
	var sk *harness.Skipped
	if errors.As(err, &sk) {
		t.Skipf("no PostgreSQL: %s", sk.Reason)
	}
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func open(t *testing.T, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func openStore(t *testing.T, dsn string) (*eventstore.Store, *engine.Engine) {
	t.Helper()
	ctx := context.Background()
	loaded, err := plugin.InProcess(ctx, postgres.New())
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.Open(ctx, open(t, dsn), loaded.Catalogue, engine.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return eventstore.New(e, nil), e
}

// holderRecorder is a metrics hook keeping failures and the last holder.
type holderRecorder struct {
	failed []error
	last   hwm.Holder
	held   bool
}

func (r *holderRecorder) Observe(string, int64, int64)              {}
func (r *holderRecorder) Failed(_ string, err error)                { r.failed = append(r.failed, err) }
func (r *holderRecorder) Holding(_ string, h hwm.Holder, held bool) { r.last, r.held = h, held }

func appendOne(t *testing.T, s *eventstore.Store, tx *sql.Tx, id string) int64 {
	t.Helper()
	ctx := context.Background()
	st := eventstore.Stream{AggregateType: "bank.Account", AggregateID: id, Events: []eventstore.Event{{Type: "test.E", Payload: []byte(`{}`)}}}
	var res eventstore.Appended
	var err error
	if tx != nil {
		res, err = s.AppendTx(ctx, tx, st)
	} else {
		res, err = s.Append(ctx, st)
	}
	if err != nil {
		t.Fatal(err)
	}
	return res.Positions[0]
}

// advanceUntil cycles until the mark reaches want (30 s guard against
// hanging, not a timed assertion).
func advanceUntil(t *testing.T, a *hwm.Advancer, s *eventstore.Store, want int64, why string) {
	t.Helper()
	ctx := context.Background()
	deadline := testtime.Deadline(30 * time.Second)
	for {
		if _, err := a.Cycle(ctx); err != nil {
			t.Fatal(err)
		}
		m, err := s.Mark(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if m >= want {
			return
		}
		if time.Now().After(deadline) {
			h, _ := a.OldestHolder()
			t.Fatalf("%s: mark stuck at %d, want %d (oldest holder %+v)", why, m, want, h)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// holds cycles a few times and checks the mark stays below held.
func holds(t *testing.T, a *hwm.Advancer, s *eventstore.Store, held int64, why string) {
	t.Helper()
	ctx := context.Background()
	for range 10 {
		if _, err := a.Cycle(ctx); err != nil {
			t.Fatal(err)
		}
		m, err := s.Mark(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if m >= held {
			t.Fatalf("%s: mark %d passed position %d", why, m, held)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func xidOf(t *testing.T, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}) int64 {
	t.Helper()
	var x int64
	if err := q.QueryRowContext(context.Background(), `SELECT pg_current_xact_id()::text::bigint`).Scan(&x); err != nil {
		t.Fatal(err)
	}
	return x
}

func dbName(t *testing.T, db *sql.DB) string {
	t.Helper()
	var n string
	if err := db.QueryRow(`SELECT current_database()`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func randomName(prefix string) string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

// TestPreparedTransactionHoldsMark: a prepared transaction that drew a
// position holds the mark after its session is gone, with no backend left
// to show its id; one prepared in another database does not.
func TestPreparedTransactionHoldsMark(t *testing.T) {
	d := fresh(t)
	s, e := openStore(t, d.DSN)
	ctx := context.Background()
	var maxPrepared int
	if err := e.DB.QueryRowContext(ctx, `SELECT current_setting('max_prepared_transactions')::int`).Scan(&maxPrepared); err != nil {
		t.Fatal(err)
	}
	if maxPrepared == 0 {
		t.Skip("max_prepared_transactions is 0 on this server (it needs a restart to change); the harness's own server sets 10")
	}
	// Prepared in another database first, so it is the cluster's oldest.
	other := open(t, fresh(t).DSN)
	gidOther, gid := randomName("tm_other_"), randomName("tm_hold_")
	otx, err := other.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	xidOf(t, otx)
	if _, err := otx.ExecContext(ctx, `PREPARE TRANSACTION '`+gidOther+`'`); err != nil {
		t.Fatal(err)
	}
	_ = otx.Rollback() // the session has no transaction left; this only frees the connection
	t.Cleanup(func() { _, _ = other.Exec(`ROLLBACK PREPARED '` + gidOther + `'`) })

	rec := &holderRecorder{}
	a := hwm.New(e, hwm.Options{Owner: "prepared", Metrics: rec})
	tx, err := e.DB.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	p1 := appendOne(t, s, tx, "prepared")
	pxid := xidOf(t, tx)
	if _, err := tx.ExecContext(ctx, `PREPARE TRANSACTION '`+gid+`'`); err != nil {
		t.Fatal(err)
	}
	_ = tx.Rollback()
	t.Cleanup(func() { _, _ = e.DB.Exec(`ROLLBACK PREPARED '` + gid + `'`) })
	p2 := appendOne(t, s, nil, "later")

	holds(t, a, s, p1, "a transaction prepared in this database")
	// The holder is the prepared transaction, or older (autovacuum's
	// ANALYZE of this database, say); when it is the prepared one, its
	// database and prepare time are known from pg_prepared_xacts.
	if h, ok := a.OldestHolder(); !ok || h.XID > pxid || (h.XID == pxid && (h.Database != dbName(t, e.DB) || h.Since.IsZero())) || h.Scope != hwm.ScopeDatabase {
		t.Errorf("oldest holder %+v (held %v), want transaction %d of %s with its prepare time", h, ok, pxid, dbName(t, e.DB))
	}
	if !rec.held || rec.last.XID > pxid {
		t.Errorf("holder metric %+v held=%v, want %d", rec.last, rec.held, pxid)
	}
	if _, err := e.DB.ExecContext(ctx, `COMMIT PREPARED '`+gid+`'`); err != nil {
		t.Fatal(err)
	}
	advanceUntil(t, a, s, p2, "after COMMIT PREPARED, with a transaction still prepared in another database")
	if got, _ := s.ReadAll(ctx, p1-1, 10); len(got) != 2 {
		t.Errorf("read %d events from %d, want 2", len(got), p1)
	}
	if len(rec.failed) != 0 {
		t.Errorf("failures: %v", rec.failed)
	}
}

// TestSubtransactionHoldsMark: a position drawn inside a savepoint is held
// by the top-level transaction, also after the savepoint is rolled back
// (the top level may still draw), until the transaction ends.
func TestSubtransactionHoldsMark(t *testing.T) {
	d := fresh(t)
	s, e := openStore(t, d.DSN)
	ctx := context.Background()
	a := hwm.New(e, hwm.Options{Owner: "subtransaction"})
	tx, err := e.DB.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `SAVEPOINT s1`); err != nil {
		t.Fatal(err)
	}
	p1 := appendOne(t, s, tx, "in-savepoint")
	p2 := appendOne(t, s, nil, "later")
	holds(t, a, s, p1, "a position drawn in an open savepoint")
	if _, err := tx.ExecContext(ctx, `ROLLBACK TO SAVEPOINT s1`); err != nil {
		t.Fatal(err)
	}
	holds(t, a, s, p1, "the top-level transaction after its savepoint rolled back")
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	advanceUntil(t, a, s, p2, "after the transaction ended")
	got, err := s.ReadAll(ctx, p1-1, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].GlobalPosition != p2 {
		t.Errorf("read %d events from %d, want only %d (the savepoint's was rolled back)", len(got), p1, p2)
	}
}

// appRole creates a LOGIN role without superuser or pg_read_all_stats that
// may create tables in d, and returns its DSN for d. The role is dropped at
// cleanup (roles are cluster-wide).
func appRole(t *testing.T, d *harness.Database) string {
	t.Helper()
	admin := open(t, d.DSN)
	role := randomName("tm_app_")
	for _, q := range []string{
		`CREATE ROLE ` + role + ` LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE`,
		`GRANT USAGE, CREATE ON SCHEMA public TO ` + role,
	} {
		if _, err := admin.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		_, _ = admin.Exec(`DROP OWNED BY ` + role)
		_, _ = admin.Exec(`DROP ROLE ` + role)
	})
	var sees bool
	if err := admin.QueryRow(`SELECT pg_has_role($1, 'pg_read_all_stats', 'USAGE')`, role).Scan(&sees); err != nil || sees {
		t.Fatalf("role %s has pg_read_all_stats (%v, %v)", role, sees, err)
	}
	u, err := url.Parse(d.DSN)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.User(role)
	return u.String()
}

// TestNonSuperuserRole: a role without superuser or pg_read_all_stats sees
// datid and backend_xid of every session, so the per-database horizon holds
// for it: another role's transaction in another database does not hold
// the mark, another role's transaction in this database does.
func TestNonSuperuserRole(t *testing.T) {
	d := fresh(t)
	appDSN := appRole(t, d)
	s, e := openStore(t, appDSN)
	ctx := context.Background()
	admin := open(t, d.DSN)        // superuser, this database
	other := open(t, fresh(t).DSN) // superuser, another database
	rec := &holderRecorder{}
	a := hwm.New(e, hwm.Options{Owner: "app", Metrics: rec})

	otx, err := other.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer otx.Rollback()
	oxid := xidOf(t, otx)
	p1 := appendOne(t, s, nil, "app-1")
	advanceUntil(t, a, s, p1, fmt.Sprintf("another role's transaction %d in another database", oxid))

	stx, err := admin.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer stx.Rollback()
	sxid := xidOf(t, stx)
	p2 := appendOne(t, s, nil, "app-2")
	holds(t, a, s, p2, "another role's transaction in this database")
	if h, ok := a.OldestHolder(); !ok || h.XID > sxid || (h.XID == sxid && h.Database != dbName(t, admin)) || h.Scope != hwm.ScopeDatabase {
		t.Errorf("oldest holder %+v (held %v), want transaction %d of %s", h, ok, sxid, dbName(t, admin))
	}
	if err := stx.Rollback(); err != nil {
		t.Fatal(err)
	}
	advanceUntil(t, a, s, p2, "after this database's transaction ended")
	if len(rec.failed) != 0 {
		t.Errorf("failures: %v", rec.failed)
	}
}

// TestFallbackWhenViewsDenied: a role refused pg_stat_activity cannot run
// xid.oldest_holder; the advancer falls back to the cluster-wide horizon,
// says so in a log line and in Holder.Scope, and keeps working.
func TestFallbackWhenViewsDenied(t *testing.T) {
	d := fresh(t)
	appDSN := appRole(t, d)
	admin := open(t, d.DSN)
	if _, err := admin.Exec(`REVOKE SELECT ON pg_catalog.pg_stat_activity FROM PUBLIC`); err != nil {
		t.Fatal(err)
	}
	s, e := openStore(t, appDSN)
	ctx := context.Background()
	other := open(t, fresh(t).DSN)
	var logs bytes.Buffer
	rec := &holderRecorder{}
	a := hwm.New(e, hwm.Options{Owner: "denied", Metrics: rec, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if a.Scope() != hwm.ScopeDatabase {
		t.Fatalf("scope before the first check: %s", a.Scope())
	}

	otx, err := other.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer otx.Rollback()
	oxid := xidOf(t, otx)
	p1 := appendOne(t, s, nil, "denied-1")
	holds(t, a, s, p1, "cluster-wide horizon, another database's transaction")
	if a.Scope() != hwm.ScopeCluster {
		t.Errorf("scope %s after xid.oldest_holder was refused, want cluster", a.Scope())
	}
	if h, ok := a.OldestHolder(); !ok || h.XID > oxid || h.Scope != hwm.ScopeCluster {
		t.Errorf("oldest holder %+v (held %v), want transaction %d, scope cluster", h, ok, oxid)
	}
	if !strings.Contains(logs.String(), "cluster-wide") || strings.Count(logs.String(), "\n") != 1 {
		t.Errorf("want one warning about the cluster-wide horizon, got:\n%s", logs.String())
	}
	if err := otx.Rollback(); err != nil {
		t.Fatal(err)
	}
	advanceUntil(t, a, s, p1, "after the other database's transaction ended")
	if len(rec.failed) != 0 {
		t.Errorf("failures: %v", rec.failed)
	}
}
