package postgres_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/dialect/plugin"
	"github.com/tidemarkdb/tidemark/plugins/postgres"
)

// TestSequenceEndNeverAheadOfNextval checks the dialect's read of the
// committed end (position.committed_end; xid.end_horizon uses the same
// expression) against the engine fact behind a Follow that skipped runs of
// committed events: nextval, when it logs ahead, writes the value it logs
// (up to 32 past the last one handed out) into the sequence tuple for the
// length of its WAL insert, under the buffer's exclusive lock, and a plain
// scan of the sequence relation reads the tuple's values after letting go
// of its share lock. The mark would then pass positions nobody had drawn,
// and appends drawing them later (with transaction ids after the horizon)
// would commit behind it.
//
// The window is widened on both sides so it is met in seconds, not hours:
// the statement under test runs wrapped in a scan whose qual sleeps, so
// its row's values are read half a millisecond after the scan released
// the buffer (the qual runs before the projection), and pg_switch_wal runs
// in a loop, so nextval's WAL insert waits while the switch zeroes the
// rest of a segment with every insertion lock held. After each wrapped
// read, pg_sequence_last_value (under the lock) bounds what was handed
// out: a read above it saw the logged-ahead value.
func TestSequenceEndNeverAheadOfNextval(t *testing.T) {
	d := fresh(t)
	db := open(t, d.DSN)
	db.SetMaxOpenConns(16)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if _, err := db.ExecContext(ctx, `CREATE SEQUENCE tm_end_probe CACHE 1`); err != nil {
		t.Fatal(err)
	}
	loaded, err := plugin.InProcess(ctx, postgres.New())
	if err != nil {
		t.Fatal(err)
	}
	end := strings.ReplaceAll(loaded.Catalogue.Statements[dialect.CommittedEnd], "${position_table}", "tm_end_probe")
	probe := `SELECT * FROM (` + end + `) e WHERE pg_sleep(0.0005) IS NOT NULL`

	const reads = 3000
	var done atomic.Bool
	var wg sync.WaitGroup
	work := func(stmt string) {
		defer wg.Done()
		for !done.Load() && ctx.Err() == nil {
			if _, err := db.ExecContext(ctx, stmt); err != nil && ctx.Err() == nil {
				t.Errorf("%s: %v", stmt, err)
				return
			}
		}
	}
	for range 3 {
		wg.Add(1)
		go work(`SELECT nextval('tm_end_probe') FROM generate_series(1, 50)`)
	}
	wg.Add(1)
	go work(`SELECT pg_switch_wal()`)
	var ahead []string
	for i := 0; i < reads && len(ahead) < 3; i++ {
		var seen, handedOut int64
		if err := db.QueryRowContext(ctx, probe).Scan(&seen); err != nil {
			t.Fatal(err)
		}
		if err := db.QueryRowContext(ctx, `SELECT COALESCE(pg_sequence_last_value('tm_end_probe'), 0)`).Scan(&handedOut); err != nil {
			t.Fatal(err)
		}
		if seen > handedOut {
			ahead = append(ahead, fmt.Sprintf("read %d while %d was the last handed out", seen, handedOut))
		}
	}
	done.Store(true)
	wg.Wait()
	if len(ahead) > 0 {
		t.Fatalf("position.committed_end (%s) read ends no nextval had handed out: %s", end, strings.Join(ahead, "; "))
	}
	// xid.end_horizon must read the end with the same locked expression.
	if eh := loaded.Catalogue.Statements[dialect.EndHorizon]; !strings.Contains(eh, "pg_sequence_last_value(") {
		t.Fatalf("xid.end_horizon does not read the end under the sequence's lock: %s", eh)
	}
}
