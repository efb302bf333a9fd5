package jdbcbridge

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"time"
)

// TestLateCancelNeverHitsTheNextStatement: a cancel that reaches the bridge after its
// statement has finished in the engine (the bridge is still sending rows) must not abort the
// connection's next statement. On HSQLDB a session cancel aborts whatever the session runs,
// and inside a transaction it left an abort pending that failed the next plain read with
// 40502 "statement execution aborted: timeout reached" (issue 8, item 8).
//
// Each round reads a large result in a transaction under a context that is cancelled at a
// varying moment, then reads again in the same transaction with a live context: that read
// must succeed every time.
func TestLateCancelNeverHitsTheNextStatement(t *testing.T) {
	forEngines(t, func(t *testing.T, e engine) {
		// The grace is a generous backstop: the connection surviving the cancel is what
		// this tests, and on a loaded machine the server may answer after the default 2 s.
		db := e.open(t, "fetchSize=100000", "cancelGrace="+backstop(time.Minute).String())
		mustExec(t, db, "CREATE TABLE big (id INT PRIMARY KEY, v VARCHAR(100))")
		mustExec(t, db, "INSERT INTO big (id, v) VALUES (0, 'row')")
		const want = 32768 // rows of 50 characters, by doubling
		for n := 1; n < want; n *= 2 {
			mustExec(t, db, fmt.Sprintf("INSERT INTO big (id, v) SELECT id + %d, '%050d' FROM big", n, 0))
		}
		ctx := context.Background()
		conn, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		canceledReads, completedReads := 0, 0
		for round := range 60 {
			tx, err := conn.BeginTx(ctx, nil)
			if err != nil {
				t.Fatalf("round %d: begin: %v", round, err)
			}
			rctx, cancel := context.WithCancel(ctx)
			// Vary the moment of the cancel over the read's life: before, during the
			// engine's work, while rows are being sent, after.
			timer := time.AfterFunc(time.Duration(round%20)*time.Millisecond, cancel)
			n, rerr := countRows(rctx, tx)
			timer.Stop()
			cancel()
			if rerr == nil {
				completedReads++
			} else {
				canceledReads++
			}
			var got int
			err = tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM big").Scan(&got)
			if rbErr := tx.Rollback(); rbErr != nil && err == nil {
				err = fmt.Errorf("rollback: %w", rbErr)
			}
			if err != nil {
				t.Fatalf("round %d: read after a cancelled read (which returned %d rows, %v): %v", round, n, rerr, err)
			}
			if got != want {
				t.Fatalf("round %d: %d rows, want %d", round, got, want)
			}
		}
		t.Logf("%d reads cancelled, %d completed before their cancel", canceledReads, completedReads)
	})
}

func countRows(ctx context.Context, tx *sql.Tx) (int, error) {
	rows, err := tx.QueryContext(ctx, "SELECT id, v FROM big ORDER BY id")
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		n++
	}
	return n, rows.Err()
}
