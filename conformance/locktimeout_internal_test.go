package conformance

import (
	"context"
	"database/sql"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/tidemarkdb/tidemark/core/dialect"
)

// A declared Locks.SessionLockTimeout is the statement the suite runs, and
// the only one: when the engine refuses it, the suite reports that refusal
// instead of trying its own forms behind the dialect's back.
func TestSessionLockTimeoutDeclared(t *testing.T) {
	ctx := context.Background()
	db, err := sql.Open("sqlite", "file:locktimeout?mode=memory")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var cat dialect.Catalogue

	if got, _ := setSessionLockTimeout(ctx, cat, conn); got != "PRAGMA busy_timeout = 500" {
		t.Errorf("undeclared: ran %q, want the first known form SQLite takes", got)
	}
	cat.Locks.SessionLockTimeout = "PRAGMA busy_timeout = 321"
	if got, _ := setSessionLockTimeout(ctx, cat, conn); got != cat.Locks.SessionLockTimeout {
		t.Errorf("declared: ran %q, want %q", got, cat.Locks.SessionLockTimeout)
	}
	var ms int
	if err := conn.QueryRowContext(ctx, "PRAGMA busy_timeout").Scan(&ms); err != nil || ms != 321 {
		t.Errorf("busy_timeout %d (%v), want 321: the declared statement did not run", ms, err)
	}
	cat.Locks.SessionLockTimeout = "SET NO_SUCH_SETTING = 1"
	got, refused := setSessionLockTimeout(ctx, cat, conn)
	if got != "" || len(refused) != 1 {
		t.Errorf("refused declaration: ran %q (refusals %q), want none and the one refusal", got, refused)
	}
}
