package engine_test

import (
	"context"
	"database/sql"
	"errors"
	"testing"
	"time"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/sqlerr"
)

var errTransient = &sqlerr.Error{Class: dialect.ErrDeadlock, Err: errors.New("deadlock")}

// TestInTxRetriesTransientWholeAndCommitsOnce: a transaction whose body
// fails with a transient error is rolled back and run again whole; the
// try that succeeds commits once, and what the failed tries wrote is gone.
func TestInTxRetriesTransientWholeAndCommitsOnce(t *testing.T) {
	e := openSQLite(t)
	ctx := context.Background()
	if _, err := e.DB.ExecContext(ctx, `CREATE TABLE tx_probe (n INTEGER)`); err != nil {
		t.Fatal(err)
	}
	tries := 0
	r := engine.TransientRetry{Initial: time.Millisecond, Max: time.Millisecond}
	err := e.InTx(ctx, engine.OpWrite, r, func(tx *sql.Tx) error {
		tries++
		if _, err := tx.ExecContext(ctx, `INSERT INTO tx_probe (n) VALUES (?)`, tries); err != nil {
			return err
		}
		if tries < 3 {
			return errTransient
		}
		return nil
	})
	if err != nil {
		t.Fatalf("InTx: %v", err)
	}
	var rows, n int
	if err := e.DB.QueryRowContext(ctx, `SELECT COUNT(*), MAX(n) FROM tx_probe`).Scan(&rows, &n); err != nil {
		t.Fatal(err)
	}
	if tries != 3 || rows != 1 || n != 3 {
		t.Fatalf("%d tries, %d rows (last n=%d): want 3 tries and only the third's row", tries, rows, n)
	}
}

// TestTransientRetryBounds: a permanent error is returned at once, a
// transient one stops at Attempts, an Unbounded policy goes past Attempts
// and Budget until the work succeeds, and a stop during the tries returns
// an error that is ctx's.
func TestTransientRetryBounds(t *testing.T) {
	e := openSQLite(t)
	fast := engine.TransientRetry{Attempts: 4, Initial: time.Millisecond, Max: time.Millisecond}
	permanent := errors.New("no such table")
	cases := []struct {
		name      string
		r         engine.TransientRetry
		failFirst int // tries that fail before one succeeds (-1: all)
		err       error
		wantTries int
		wantErr   error
	}{
		{"permanent error: one try", fast, -1, permanent, 1, permanent},
		{"transient error: Attempts tries", fast, -1, errTransient, 4, errTransient},
		{"transient then success", fast, 2, errTransient, 3, nil},
		{"unbounded outlasts Attempts and Budget", engine.TransientRetry{Unbounded: true, Attempts: 2, Budget: time.Nanosecond,
			Initial: time.Millisecond, Max: time.Millisecond}, 10, errTransient, 11, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tries := 0
			err := c.r.Do(context.Background(), e.Transient, func() error {
				tries++
				if c.failFirst < 0 || tries <= c.failFirst {
					return c.err
				}
				return nil
			})
			if tries != c.wantTries || !errors.Is(err, c.wantErr) || (c.wantErr == nil) != (err == nil) {
				t.Fatalf("%d tries, err %v; want %d tries, err %v", tries, err, c.wantTries, c.wantErr)
			}
		})
	}
	t.Run("stop while retrying", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		tries := 0
		err := engine.TransientRetry{Unbounded: true}.Do(ctx, e.Transient, func() error {
			tries++
			if tries == 3 {
				cancel()
			}
			return errTransient
		})
		if !errors.Is(err, context.Canceled) || !errors.Is(err, errTransient) || tries != 3 {
			t.Fatalf("%d tries, err %v: want 3 tries and an error that is both the stop and the last failure", tries, err)
		}
	})
}
