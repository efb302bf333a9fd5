package log

import (
	"context"
	"database/sql"

	"github.com/tidemarkdb/tidemark/core/engine"
)

// Source describes a log's records to the page read and Follow.
type Source[R any] struct {
	// Begin starts a read-only transaction (engine.BeginRead).
	Begin func(ctx context.Context) (*sql.Tx, error)
	// Mark reads the log's mark on q. A log with a start (whose history
	// below it is deleted) refuses here a read after a position below it.
	Mark func(ctx context.Context, q engine.Querier, after int64) (int64, error)
	// Start, when the log has one (its history below it is deleted),
	// refuses on q a read after a position below it; UpTo asks it, Page
	// leaves it to Mark, which reads both in one statement.
	Start func(ctx context.Context, q engine.Querier, after int64) error
	// Range calls each with the records of partition (-1 for every one)
	// in (after, upto], at most limit of them, in position order, and
	// returns each's error as it is.
	Range func(ctx context.Context, q engine.Querier, partition int, after, upto int64, limit int, each func(R) error) error
	// Position is a record's position.
	Position func(R) int64
	// Err classifies a database error of the read (the dialect's errors).
	Err func(error) error
	// Streams tells whether Range may hand Follow's handler a record while
	// the page is still read: false where Range must see the whole page
	// first (several tables merged, a start checked after the rows) or the
	// pool has one connection (a handler using the database would wait for
	// itself).
	Streams bool
}

// Page reads the mark and the page of up to limit records in (after, mark]
// (of one partition, or of all when partition is -1) in one read-only
// transaction, on one connection: a pool spread over replicas cannot read
// the mark on one server and the page on another that is behind. A page
// shorter than limit means every record up to that mark was read.
func (s Source[R]) Page(ctx context.Context, partition int, after int64, limit int) ([]R, int64, error) {
	var page []R
	_, mark, err := s.read(ctx, partition, after, limit, func(upto int64) {
		page = make([]R, 0, presize(after, upto, limit))
	}, func(r R) error {
		page = append(page, r)
		return nil
	})
	return page, mark, err
}

// maxPresize bounds the records a page makes room for before reading: a
// catch-up page is read whole, and growing it as rows arrive copied it
// over and over.
const maxPresize = 10000

// presize is the room a page of (after, upto] makes before reading: at
// most limit records, and no more than the positions in that range (each
// record has a position of its own). Sizing by limit alone made every poll
// of a consumer keeping up allocate a catch-up page (megabytes for a
// record or two), and the collector that follows stalled readers for
// milliseconds.
func presize(after, upto int64, limit int) int {
	n := int64(min(max(limit, 0), maxPresize))
	if upto <= after {
		return 0
	}
	if d := upto - after; d > 0 && d < n { // d <= 0: overflow, a huge range
		n = d
	}
	return int(n)
}

// UpTo reads (after, upto] in a read-only transaction of its own, with the
// log's start (if any) checked first, so a read below it is reported even
// when there is nothing to read; upto must not exceed the mark, and must
// come from the server the page is read from.
func (s Source[R]) UpTo(ctx context.Context, partition int, after, upto int64, limit int) ([]R, error) {
	page := make([]R, 0, presize(after, upto, limit))
	err := s.inRead(ctx, func(q engine.Querier) error {
		if s.Start != nil {
			if err := s.Start(ctx, q, after); err != nil {
				return err
			}
		}
		return s.rangeOf(ctx, q, partition, after, upto, limit, func(r R) error {
			page = append(page, r)
			return nil
		})
	})
	return page, s.Err(err)
}

// read is Page calling each in the read transaction; it returns how many
// records each saw and the mark, and each's error as each returned it.
// marked, when set, is told the mark before the first record is read.
func (s Source[R]) read(ctx context.Context, partition int, after int64, limit int, marked func(int64), each func(R) error) (int, int64, error) {
	n, mark := 0, int64(0)
	err := s.inRead(ctx, func(q engine.Querier) error {
		var err error
		if mark, err = s.Mark(ctx, q, after); err != nil {
			return err
		}
		if marked != nil {
			marked(mark)
		}
		return s.rangeOf(ctx, q, partition, after, mark, limit, func(r R) error {
			n++
			if err := each(r); err != nil {
				return handlerError{err}
			}
			return nil
		})
	})
	if h, ok := err.(handlerError); ok { //nolint:errorlint // Range returns each's error as is
		return n, mark, h.err
	}
	return n, mark, s.Err(err)
}

func (s Source[R]) rangeOf(ctx context.Context, q engine.Querier, partition int, after, upto int64, limit int, each func(R) error) error {
	if limit <= 0 {
		limit = 1000
	}
	if upto <= after {
		return nil
	}
	return s.Range(ctx, q, partition, after, upto, limit, each)
}

// inRead runs fn in a read-only transaction of its own.
func (s Source[R]) inRead(ctx context.Context, fn func(engine.Querier) error) error {
	tx, err := s.Begin(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }() // after Commit: a no-op
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit()
}

// handlerError carries the error of Follow's handler through the page read
// unchanged (it is the caller's, not the database's, so it is not wrapped
// or classified).
type handlerError struct{ err error }

func (h handlerError) Error() string { return h.err.Error() }
