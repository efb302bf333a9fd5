package engine_test

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tidemarkdb/tidemark/conformance/harness"
	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/eventstore"
	"github.com/tidemarkdb/tidemark/internal/testtime"
	"github.com/tidemarkdb/tidemark/plugins/postgres"
)

// openPostgres returns a fresh PostgreSQL database of the harness (pgx), or
// skips with the harness's reason.
func openPostgres(t *testing.T) *sql.DB {
	t.Helper()
	ctx, cancel := testtime.Context(context.Background(), 2*time.Minute)
	defer cancel()
	prov := harness.NewProvider()
	t.Cleanup(func() { prov.Close() })
	d, err := prov.Open(ctx, harness.EnginePostgres, "pgx")
	var sk *harness.Skipped
	if errors.As(err, &sk) {
		t.Skipf("no PostgreSQL: %s", sk.Reason)
	}
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("pgx", d.DSN)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func cacheSize(t *testing.T, db *sql.DB, seq string) int64 {
	t.Helper()
	var n int64
	if err := db.QueryRow(`SELECT cache_size FROM pg_sequences WHERE schemaname = current_schema() AND sequencename = $1`, strings.ToLower(seq)).Scan(&n); err != nil {
		t.Fatalf("cache size of %s: %v", seq, err)
	}
	return n
}

// TestEveryPositionSequenceCacheOneAtStartup: every position sequence
// created with CACHE 20 (before the first start: the DDL's CREATE SEQUENCE
// IF NOT EXISTS leaves it so) is CACHE 1 once the engine has started, the
// read-model topics' READ_MODEL_CAPTURE_POSITIONS included (the
// spec-deviations claim; the startup loop once covered only the two
// global-position sequences).
func TestEveryPositionSequenceCacheOneAtStartup(t *testing.T) {
	db := openPostgres(t)
	ctx := context.Background()
	seqs := []string{"EVENT_STORE_GLOBAL_POSITION", "EVENT_CAPTURE_GLOBAL_POSITION", "READ_MODEL_CAPTURE_POSITIONS"}
	for _, s := range seqs {
		if _, err := db.ExecContext(ctx, "CREATE SEQUENCE "+s+" START WITH 1 CACHE 20"); err != nil {
			t.Fatal(err)
		}
	}
	e, err := engine.Open(ctx, db, postgres.Catalogue(), engine.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	for _, s := range seqs {
		if n := cacheSize(t, db, s); n != 1 {
			t.Errorf("%s has CACHE %d after startup, want 1", s, n)
		}
	}
}

// TestDeclaredIsolationIsSet: the level a dialect declares per operation is
// the level of the transactions the core begins for it (PostgreSQL's
// default would be read committed for each).
func TestDeclaredIsolationIsSet(t *testing.T) {
	db := openPostgres(t)
	ctx := context.Background()
	c := postgres.Catalogue()
	c.Isolation = dialect.Isolation{Append: dialect.IsolationSerializable, HWM: dialect.IsolationRepeatableRead, Read: dialect.IsolationRepeatableRead}
	e, err := engine.Open(ctx, db, c, engine.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	for op, want := range map[engine.Operation]string{engine.OpAppend: "serializable", engine.OpHWM: "repeatable read", engine.OpRead: "repeatable read"} {
		tx, err := e.BeginTx(ctx, op)
		if err != nil {
			t.Fatal(err)
		}
		var got string
		if err := tx.QueryRowContext(ctx, "SHOW transaction_isolation").Scan(&got); err != nil {
			t.Fatal(err)
		}
		_ = tx.Rollback()
		if got != want {
			t.Errorf("operation %d: isolation %q, want %q", op, got, want)
		}
	}
	// An append of two streams runs in a transaction of its own, at the
	// declared level.
	s := eventstore.New(e, nil)
	one := []eventstore.Event{{Type: "E", Payload: []byte(`{}`)}}
	if _, err := s.Append(ctx,
		eventstore.Stream{AggregateType: "t.A", AggregateID: "a-1", Events: one},
		eventstore.Stream{AggregateType: "t.A", AggregateID: "a-2", Events: one},
	); err != nil {
		t.Fatal(err)
	}
	// A read with a declared level reads every event table in one
	// transaction at that level.
	if got, err := s.ReadUpTo(ctx, 0, 100, 100); err != nil || len(got) != 2 {
		t.Fatalf("read %d events (%v), want 2", len(got), err)
	}
}
