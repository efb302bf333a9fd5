package conformance

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/eventstore"
	"github.com/tidemarkdb/tidemark/core/hwm"
	"github.com/tidemarkdb/tidemark/internal/sqlcount"
	"github.com/tidemarkdb/tidemark/internal/testtime"
)

func followStreamTests() []Test {
	return []Test{
		{"eventstore/follow_streams_rows", func(t T, env *Env) { followStream(t, env, false) }},
		{"eventstore/follow_buffered", func(t T, env *Env) { followStream(t, env, true) }},
		// hwm/interleaved_* with one event table, where Follow streams.
		{"hwm/interleaved_commits_tail_reader_streamed", func(t T, env *Env) { interleavedOn(t, env, false, oneEventTable(env)) }},
		{"hwm/interleaved_autocommit_tail_reader_streamed", func(t T, env *Env) { interleavedOn(t, env, true, oneEventTable(env)) }},
		// The same appends group-committed (the default): the batches'
		// positions pass through the same mark.
		{"hwm/interleaved_group_commit_tail_reader_streamed", func(t T, env *Env) {
			_ = interleavedWith(t, env, true, oneEventTable(env), 16, eventstore.WithGroupCommit(true))
		}},
	}
}

// oneEventTable is the default configuration without the aggregates of
// their own tables: one event table, so Follow streams its pages.
func oneEventTable(env *Env) engine.Config {
	cfg := defaultConfig(env)
	cfg.Names.Aggregates = nil
	return cfg
}

// followStream appends a page of events and follows them through a
// driver that counts the rows it delivers. Streamed (the default), the
// handler sees the first event before the driver has delivered the rest of
// the page (before, Follow read the whole page first); FollowOptions.Buffered
// reads it whole. Either way the handler may use the database (it appends
// an event of its own while the page's read transaction is open), every
// event comes once in global order, and the handler's error ends Follow
// unchanged.
func followStream(t T, env *Env, buffered bool) {
	ctx, cancel := testtime.Context(context.Background(), 2*time.Minute)
	defer cancel()
	cfg := oneEventTable(env)
	counts := sqlcount.Counts{CountRows: true}
	e := countedEngine(t, env, cfg, &counts)
	s := eventstore.New(e, nil)
	a := hwm.New(e, hwm.Options{})
	start, err := advanceUntil(ctx, a, s, 0)
	if err != nil {
		t.Fatal(err)
	}
	const n = 40
	id := newID(t)
	evs := make([]eventstore.Event, n)
	for i := range evs {
		evs[i] = ev("test.E", fmt.Sprintf(`{"i":%d}`, i))
	}
	res, err := s.Append(ctx, eventstore.Stream{AggregateType: "bank.Account", AggregateID: id, Events: evs})
	if err != nil {
		t.Fatalf("append: %v", err)
	}
	if _, err := advanceUntil(ctx, a, s, res.Positions[n-1]); err != nil {
		t.Fatal(err)
	}
	errDone := errors.New("all seen")
	var seen []int64
	rowsAtFirst := int64(-1)
	rows0 := counts.Rows.Load()
	err = s.Follow(ctx, start, eventstore.FollowOptions{PageSize: n + 10, Buffered: buffered}, func(r eventstore.Recorded) error {
		if r.AggregateID != id {
			return nil // another test's event
		}
		if len(seen) == 0 {
			rowsAtFirst = counts.Rows.Load() - rows0
			// The handler uses the database while the page is being read.
			if _, err := s.Append(ctx, eventstore.Stream{AggregateType: "bank.Account", AggregateID: newID(t),
				Events: []eventstore.Event{ev("test.Other", `{}`)}}); err != nil {
				return fmt.Errorf("append in the handler: %w", err)
			}
		}
		seen = append(seen, r.GlobalPosition)
		if len(seen) == n {
			return errDone
		}
		return nil
	})
	if err != errDone { //nolint:errorlint // the handler's error must come back as it was returned
		t.Fatalf("Follow returned %v, want the handler's own error", err)
	}
	for i, p := range seen {
		if p != res.Positions[i] {
			t.Fatalf("event %d at position %d, want %d (appended at %v)", i, p, res.Positions[i], res.Positions)
		}
	}
	// Before the first event the driver delivered the mark row and the
	// first event (and another test's rows, at most); the page has n rows.
	if buffered && rowsAtFirst < n {
		t.Errorf("buffered: the handler saw the first event after %d rows, want the whole page (%d) read first", rowsAtFirst, n)
	}
	if !buffered && rowsAtFirst >= n {
		t.Errorf("the handler saw the first event after the driver delivered %d rows: the page of %d was read whole first, not streamed", rowsAtFirst, n)
	}
	t.Logf("rows delivered by the driver when the handler saw the first event: %d (page of %d)", rowsAtFirst, n)
}
