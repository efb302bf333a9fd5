package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidemarkdb/tidemark/conformance/harness"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/eventstore"
	"github.com/tidemarkdb/tidemark/core/saga"
	"github.com/tidemarkdb/tidemark/internal/testtime"
)

type cliSagaState struct{ N int }
type cliSagaOpened struct{ ID string }
type cliSagaDone struct{ ID string }

// TestSagasCommands runs `tidemark sagas status|list|purge` on SQLite: the
// counts and list of a database with sagas, JSON, a purge that keeps the
// active saga, and the read commands on a missing file, which they do not
// create.
func TestSagasCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts a dialect plugin")
	}
	path := filepath.Join(t.TempDir(), "missing.db")
	for _, c := range [][]string{{"status"}, {"list"}, {"purge", "--saga-type", "x", "--older-than", "1h"}} {
		_, err := run(t, sagasCmd(), append(c, "--dialect", "sqlite", "--dsn", "file:"+path)...)
		if !errors.Is(err, errNoDatabaseFile) {
			t.Errorf("sagas %s on a missing file: %v, want no Tidemark schema", c[0], err)
		}
		if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("sagas %s created %s", c[0], path)
		}
	}
	prov := harness.NewProvider()
	t.Cleanup(func() { prov.Close() })
	db := openOrSkip(t, prov, harness.EngineSQLite)
	args := []string{"--dialect", "sqlite", "--dsn", db.DSN, "--driver", db.DriverName}
	ctx := context.Background()
	l, err := load(ctx, &pluginFlags{dialect: "sqlite"})
	if err != nil {
		t.Fatal(err)
	}
	h, err := sql.Open(db.DriverName, db.DSN)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	e, err := engine.Open(ctx, h, l.Catalogue, engine.Config{Partitions: 16})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	s := saga.New[cliSagaState]("cli.Saga")
	saga.StartOn(s, func(e cliSagaOpened) string { return e.ID }, func(saga.Context, cliSagaOpened, *cliSagaState) error { return nil })
	saga.On(s, func(e cliSagaDone) string { return e.ID }, func(saga.Context, cliSagaDone, *cliSagaState) error { return saga.Complete })
	st, err := saga.Open(e, s)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range []any{cliSagaOpened{"a"}, cliSagaOpened{"b"}, cliSagaDone{"b"}} {
		b, _ := json.Marshal(ev)
		typ := jsonType(ev)
		if err := e.InTx(ctx, engine.OpWrite, engine.TransientRetry{}, func(tx *sql.Tx) error {
			return st.Apply(ctx, tx, eventstore.Recorded{ID: typ, Type: typ, Payload: b})
		}); err != nil {
			t.Fatal(err)
		}
	}
	out, err := run(t, sagasCmd(), append([]string{"status"}, args...)...)
	if err != nil || !strings.Contains(out, "cli.Saga") || !strings.Contains(out, "deadline lock: never taken") {
		t.Errorf("sagas status: %v\n%s", err, out)
	}
	out, err = run(t, sagasCmd(), append([]string{"status", "--json"}, args...)...)
	var got saga.Status
	if err != nil || json.Unmarshal([]byte(out), &got) != nil || len(got.Types) != 1 || got.Types[0].Active != 1 || got.Types[0].Completed != 1 {
		t.Errorf("sagas status --json: %v\n%s", err, out)
	}
	out, err = run(t, sagasCmd(), append([]string{"list", "--saga-type", "cli.Saga"}, args...)...)
	if err != nil || strings.Count(out, "cli.Saga") != 2 {
		t.Errorf("sagas list: %v\n%s", err, out)
	}
	// The completed saga is purged once the database clock has passed its
	// completed_at (purge again until it has: no timed assertion).
	purged := int64(0)
	err = testtime.Poll(ctx, "the completed saga purged", time.Minute, 10*time.Millisecond, func() (bool, error) {
		out, err := run(t, sagasCmd(), append([]string{"purge", "--saga-type", "cli.Saga", "--older-than", "0s", "--json"}, args...)...)
		var got map[string]int64
		if err != nil || json.Unmarshal([]byte(out), &got) != nil {
			return false, fmt.Errorf("sagas purge: %v\n%s", err, out)
		}
		purged += got["purged"]
		_, ok, err := st.Get(ctx, "b")
		return !ok, err
	}, nil)
	if err != nil || purged != 1 {
		t.Errorf("sagas purge: %v; purged %d, want the completed saga b, once", err, purged)
	}
	if _, ok, _ := st.Get(ctx, "a"); !ok {
		t.Errorf("the purge removed the active saga")
	}
	if _, err := run(t, sagasCmd(), append([]string{"purge", "--saga-type", "cli.Saga", "--older-than", "1h", "--table", "NOPE"}, args...)...); !errors.Is(err, saga.ErrInvalidDeclaration) {
		t.Errorf("purge of an unknown table: %v, want ErrInvalidDeclaration", err)
	}
}

// jsonType is the Go type name of an event, as the store records it.
func jsonType(v any) string {
	switch v.(type) {
	case cliSagaOpened:
		return "cliSagaOpened"
	case cliSagaDone:
		return "cliSagaDone"
	}
	return ""
}
