package conformance

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/eventstore"
	"github.com/tidemarkdb/tidemark/core/topic"
)

// endRead is one read of the committed end and when it had returned.
type endRead struct {
	end int64
	at  time.Time
}

// drawn is one committed append: when it was called and the least
// position it drew.
type drawn struct {
	at    time.Time
	least int64
}

// Bounds of testCommittedEndNeverAhead: enough reads that, on a
// PostgreSQL whose end was read from the sequence relation without its
// buffer lock, some may land in nextval's window (see the test's doc), and
// enough draws that nextval logged ahead many times. The window is
// short: on PostgreSQL one reader in three widens it (slowEndRead).
const (
	committedEndReads = 5000
	committedEndDraws = 10000
)

// testCommittedEndNeverAhead checks the one fact the mark builds on: the
// committed end a cycle reads (Positions.CommittedEnd, and xid.end_horizon
// where the dialect folds it) never names a position that no append has
// drawn yet. An end read at time t is wrong when an append called after t
// drew a position at or below it: the mark would then pass that position
// before it was drawn, and every reader that trusts the mark would skip
// it once it committed.
//
// On PostgreSQL, reading last_value from the sequence relation is such a
// read: nextval writes the value it logs ahead (up to 32 past the last one
// handed out) into the sequence tuple for the length of its WAL insert,
// under the buffer's exclusive lock, and a plain scan of the relation
// reads the tuple without that lock. Follow then skipped runs of 28-32
// committed events. pg_sequence_last_value reads under the lock. The
// window is short: the test draws many positions in big appends (many
// log-ahead writes) while several readers read the end, and on
// PostgreSQL switches the WAL segment in a loop (nextval's WAL insert then
// waits while the switch holds every insertion lock); where the role may
// not switch it, it does without.
func testCommittedEndNeverAhead(t T, env *Env) {
	s, e := openStore(t, env)
	committedEndNeverAhead(t, env, e, e.Names.Shared["event_store_global_position_table"], func(ctx context.Context, w, i int) ([]int64, error) {
		evs := make([]eventstore.Event, 100)
		for j := range evs {
			evs[j] = ev("t.Drawn", `{}`)
		}
		res, err := s.Append(ctx, eventstore.Stream{AggregateType: "bank.Account", AggregateID: fmt.Sprintf("end-%d-%d", w, i), Events: evs})
		return res.Positions, err
	})
}

// testCaptureEndNeverAhead is testCommittedEndNeverAhead on the capture
// topic's position object, drawn by publishes of 100 messages.
func testCaptureEndNeverAhead(t T, env *Env) {
	tp, _, e := openCapture(t, env)
	committedEndNeverAhead(t, env, e, e.Names.Shared["event_capture_global_position_table"], func(ctx context.Context, w, i int) ([]int64, error) {
		msgs := make([]topic.Message, 100)
		for j := range msgs {
			msgs[j] = msg(fmt.Sprintf("k-%d", j%7), `{}`)
		}
		return tp.Publish(ctx, msgs...)
	})
}

// committedEndNeverAhead is the check of testCommittedEndNeverAhead on the
// position object table, whose positions draw draws (writer w, call i).
func committedEndNeverAhead(t T, env *Env, e *engine.Engine, table string, draw func(ctx context.Context, w, i int) ([]int64, error)) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	var reads atomic.Int64
	var drawnTotal atomic.Int64
	done := func() bool { return reads.Load() >= committedEndReads && drawnTotal.Load() >= committedEndDraws }
	var mu sync.Mutex
	var ends []endRead
	var draws []drawn
	var firstErr error
	fail := func(err error) {
		mu.Lock()
		if firstErr == nil {
			firstErr = err
		}
		mu.Unlock()
		cancel()
	}

	var wg sync.WaitGroup
	for w := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ctx.Err() == nil && !done(); i++ {
				at := time.Now()
				pos, err := draw(ctx, w, i)
				if err != nil {
					if ctx.Err() == nil {
						fail(fmt.Errorf("append: %w", err))
					}
					return
				}
				mu.Lock()
				draws = append(draws, drawn{at: at, least: slices.Min(pos)})
				mu.Unlock()
				drawnTotal.Add(int64(len(pos)))
			}
		}()
	}
	slow := slowEndRead(ctx, env, e, table)
	for r := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ctx.Err() == nil && !done(); i++ {
				end, err := readEnd(ctx, e, table, (r+i)%3, slow)
				if err != nil {
					if ctx.Err() == nil {
						fail(err)
					}
					return
				}
				at := time.Now()
				mu.Lock()
				ends = append(ends, endRead{end: end, at: at})
				mu.Unlock()
				reads.Add(1)
			}
		}()
	}
	if slow != "" {
		// Draws of their own besides the appends' (PostgreSQL syntax, as
		// slow is): nextval in a tight loop logs ahead far more often.
		for range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				q := `SELECT MIN(n) FROM (SELECT nextval('` + table + `') AS n FROM generate_series(1, 50)) x`
				for ctx.Err() == nil && !done() {
					at := time.Now()
					var least int64
					if err := env.DB.QueryRowContext(ctx, q).Scan(&least); err != nil {
						if ctx.Err() == nil {
							fail(fmt.Errorf("drawing: %w", err))
						}
						return
					}
					mu.Lock()
					draws = append(draws, drawn{at: at, least: least})
					mu.Unlock()
				}
			}()
		}
	}
	if !env.Features.CounterPositions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil && !done() {
				if _, err := env.DB.ExecContext(ctx, `SELECT pg_switch_wal()`); err != nil {
					return // a role that may not switch the WAL: the appends still log ahead
				}
				time.Sleep(2 * time.Millisecond)
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		t.Fatal(firstErr)
	}
	if bad, ok := endAheadOfDraws(ends, draws); ok {
		t.Fatalf("the committed end %d was read before position %d was drawn (%d positions at or below the end drawn later): a mark there would pass positions not yet drawn",
			bad.end, bad.least, bad.end-bad.least+1)
	}
	t.Logf("%d end reads, %d positions drawn by appends, %d draws in all: no end ahead of the draws", len(ends), drawnTotal.Load(), len(draws))
}

// slowEndRead returns, on PostgreSQL, position.committed_end's text for
// table wrapped in a scan whose qual sleeps half a millisecond, so the
// row's values are read well after the scan released the buffer (the qual
// runs before the projection): a read that takes no lock then meets
// nextval's window in every run. Elsewhere (no pg_sleep) it returns "".
func slowEndRead(ctx context.Context, env *Env, e *engine.Engine, table string) string {
	if env.Features.CounterPositions {
		return ""
	}
	if _, err := env.DB.ExecContext(ctx, `SELECT pg_sleep(0)`); err != nil {
		return ""
	}
	c, err := e.Compile(dialect.CommittedEnd, map[string]string{"position_table": table})
	if err != nil || len(c.Params) > 0 {
		return ""
	}
	return `SELECT * FROM (` + c.SQL + `) e WHERE pg_sleep(0.0005) IS NOT NULL`
}

// readEnd reads the committed end: way 0 through the position seam, 1
// through xid.end_horizon where the dialect has it (with a mark no end
// passes, so the statement takes no transaction id), 2 through slow where
// it is set (see slowEndRead).
func readEnd(ctx context.Context, e *engine.Engine, table string, way int, slow string) (int64, error) {
	if way == 2 && slow != "" {
		var end int64
		if err := e.DB.QueryRowContext(ctx, slow).Scan(&end); err != nil {
			return 0, fmt.Errorf("committed end, slowed: %w", err)
		}
		return end, nil
	}
	if way == 1 && e.Has(dialect.EndHorizon) {
		var end int64
		var horizon, oldest any
		err := e.QueryRow(ctx, e.DB, dialect.EndHorizon, map[string]string{"position_table": table},
			map[string]any{"mark": int64(1) << 62}).Scan(&end, &horizon, &oldest)
		if err != nil {
			return 0, fmt.Errorf("xid.end_horizon: %w", err)
		}
		return end, nil
	}
	end, err := e.Positions.CommittedEnd(ctx, e.DB, table)
	if err != nil {
		return 0, fmt.Errorf("committed end: %w", err)
	}
	return end, nil
}

// aheadRead is an end read before an append drew a position at or below it.
type aheadRead struct{ end, least int64 }

// endAheadOfDraws finds an end read that an append called after it drew
// under: with the appends in call order, the least position drawn by any
// append called after a read must lie above that read's end.
func endAheadOfDraws(ends []endRead, draws []drawn) (aheadRead, bool) {
	sort.Slice(draws, func(i, j int) bool { return draws[i].at.Before(draws[j].at) })
	// least[i] is the least position drawn by draws[i:].
	least := make([]int64, len(draws)+1)
	least[len(draws)] = 1<<63 - 1
	for i := len(draws) - 1; i >= 0; i-- {
		least[i] = min(least[i+1], draws[i].least)
	}
	for _, r := range ends {
		i := sort.Search(len(draws), func(i int) bool { return draws[i].at.After(r.at) })
		if least[i] <= r.end {
			return aheadRead{end: r.end, least: least[i]}, true
		}
	}
	return aheadRead{}, false
}
