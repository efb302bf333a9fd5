package fbdriver

import (
	"database/sql/driver"
	"errors"
	"testing"
)

// TestReopenErrorBreaksConnection: the server's "Attempt to reopen an open
// cursor" (a cursor whose close failed, still open on the attachment)
// breaks the connection and comes back as driver.ErrBadConn, so database/sql
// discards it and the core retries; other errors pass unchanged.
func TestReopenErrorBreaksConnection(t *testing.T) {
	g := &guardedConn{}
	other := errors.New("SQL error code = -204\nTable unknown")
	if err := g.cursorLeft(other); err != other || g.broken.Load() {
		t.Fatalf("another error: %v, broken %v; want it unchanged, not broken", err, g.broken.Load())
	}
	err := g.cursorLeft(errors.New("SQL error code = -502\nAttempt to reopen an open cursor"))
	if !errors.Is(err, driver.ErrBadConn) || !g.broken.Load() {
		t.Fatalf("reopen error: %v, broken %v; want driver.ErrBadConn and broken", err, g.broken.Load())
	}
	if g.IsValid() {
		t.Error("a broken connection reports itself valid")
	}
}
