package eventstore

import (
	"context"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/engine"
)

// handlerError carries the error of Follow's handler through the page read
// unchanged (it is the caller's, not the database's, so it is not wrapped
// or classified).
type handlerError struct{ err error }

func (h handlerError) Error() string { return h.err.Error() }

// streams tells whether Follow calls its handler row by row while the page
// is read: with one event table (several are merged in position order,
// which needs the whole page) and unless opts or the pool rule it out. The
// handler then runs while the page's read transaction holds a connection,
// so a pool of one connection (db.SetMaxOpenConns(1)) would leave a handler
// that uses the database waiting for itself: such a pool reads the page
// whole first.
func (s *Store) streams(opts FollowOptions) bool {
	return !opts.Buffered && len(s.e.Names.EventTables) == 1 && s.e.DB.Stats().MaxOpenConnections != 1
}

// followPage reads the mark and the events in (after, mark], at most limit
// of them, in one read-only transaction (as readPage), and calls fn for
// each in position order. Streamed, fn sees a row as soon as it is
// scanned, and no page is materialised (a 5,000-event page was a slice of
// ~1 MB grown by copying, and 15 % of Follow's CPU in GC); buffered, the
// page is read whole first. It returns how many events fn saw and the mark;
// fn's error is returned as fn returned it.
func (s *Store) followPage(ctx context.Context, after int64, limit int, streamed bool, fn func(Recorded) error) (int, int64, error) {
	if !streamed {
		page, mark, err := s.readPage(ctx, -1, after, limit)
		if err != nil {
			return 0, 0, err
		}
		for i, r := range page {
			if err := fn(r); err != nil {
				return i, mark, err
			}
		}
		return len(page), mark, nil
	}
	n, mark := 0, int64(0)
	err := s.inRead(ctx, func(q queryer) error {
		r, err := s.e.ReadMarkRow(ctx, q, engine.EventStoreTopic)
		if err != nil {
			return err
		}
		mark = r.Mark
		if mark <= after {
			return nil
		}
		t := s.e.Names.EventTables[0]
		rows, err := s.e.Query(ctx, q, dialect.EventRange, map[string]string{"event_store_table": t},
			map[string]any{"after": after, "upto": mark, "limit": limit})
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			ev, err := scanEvent(rows)
			if err != nil {
				return err
			}
			n++
			if err := fn(ev); err != nil {
				return handlerError{err}
			}
		}
		return rows.Err()
	})
	if h, ok := err.(handlerError); ok { //nolint:errorlint // inRead returns fn's error as is
		return n, mark, h.err
	}
	return n, mark, s.dbErr(err)
}
