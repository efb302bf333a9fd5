package engine_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/engine"
	sqliteplugin "github.com/tidemarkdb/tidemark/plugins/sqlite"
)

// TestEngineChecks runs declared engine checks on a real embedded SQLite
// (PRAGMA user_version stands in for a setting such as HSQLDB's
// sql.pad_space): a wrong setting is fixed when Fix works, and otherwise
// refuses the start with a typed error before any DDL.
func TestEngineChecks(t *testing.T) {
	const read = "PRAGMA user_version"
	tests := []struct {
		name    string
		check   dialect.EngineCheck
		wantErr bool
	}{
		{"right already", dialect.EngineCheck{Name: "v", Query: read, Want: "0"}, false},
		{"fixed", dialect.EngineCheck{Name: "v", Query: read, Want: "7", Fix: "PRAGMA user_version = 7"}, false},
		{"no fix", dialect.EngineCheck{Name: "v", Query: read, Want: "7", Remedy: "ask a DBA"}, true},
		{"fix refused", dialect.EngineCheck{Name: "v", Query: read, Want: "7", Fix: "SET nothing", Remedy: "ask a DBA"}, true},
		// An unknown PRAGMA is silently ignored: the value stays wrong.
		{"fix without effect", dialect.EngineCheck{Name: "v", Query: read, Want: "7", Fix: "PRAGMA no_such_pragma = 1"}, true},
		// The fix's first statement sets it, its second fails: what a start
		// sees when another process fixed the setting first.
		{"fix failed, set meanwhile", dialect.EngineCheck{Name: "v", Query: read, Want: "7", Fix: "PRAGMA user_version = 7; CREATE TABLE t(x); CREATE TABLE t(x)"}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "c.db"))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			cat := sqliteplugin.Catalogue()
			cat.Checks = []dialect.EngineCheck{tc.check}
			e, err := engine.Open(context.Background(), db, cat, engine.Config{})
			var se *engine.EngineSettingError
			if tc.wantErr {
				if !errors.As(err, &se) || !errors.Is(err, engine.ErrEngineSetting) {
					t.Fatalf("Open = %v (%T), want *EngineSettingError", err, err)
				}
				var n int
				if err := db.QueryRow("SELECT COUNT(*) FROM sqlite_master").Scan(&n); err != nil || n != 0 {
					t.Fatalf("%d objects created before the refusal (%v), want 0", n, err)
				}
				t.Logf("refused: %v", err)
				return
			}
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			e.Close()
			var v string
			if err := db.QueryRow(read).Scan(&v); err != nil || v != tc.check.Want {
				t.Fatalf("%s = %q (%v), want %q", read, v, err, tc.check.Want)
			}
		})
	}
}
