package eventstore

import (
	"context"
	"time"
)

// Waker tells a follower the mark moved; *hwm.Advancer implements it.
type Waker interface {
	// Changed returns a channel closed when the mark next moves.
	Changed() <-chan struct{}
}

// FollowOptions configure Follow.
type FollowOptions struct {
	// Waker wakes the follower as soon as a local advancer moves the mark.
	// Without one (or for marks moved by another process) the follower
	// polls every PollInterval.
	Waker        Waker
	PollInterval time.Duration // default 100ms
	// PageSize is the most events one query returns (default 5000: a page
	// is one round trip, and at 1000 rows the round trips cost PostgreSQL a
	// quarter of its read rate; see docs/performance.md).
	PageSize int
	// Buffered reads each page whole before fn sees its first event, so no
	// connection is held while fn runs. By default (false) fn is called row
	// by row as the page is read (less memory and GC, see docs/performance.md),
	// on the connection of the page's read transaction: a handler that uses
	// the database then needs another connection of the pool. With a pool of
	// one connection (SetMaxOpenConns(1)) Follow buffers on its own; set
	// Buffered when the pool is small and several handlers use it.
	Buffered bool
}

// Follow calls fn for every event after position after, in global order,
// exactly once each, as the high-water mark passes it: never an event whose
// transaction may still commit before an earlier one. It returns when ctx
// ends (with ctx.Err()) or fn returns an error (returned as it is). An
// error reading a page may come after fn saw some of its events.
func (s *Store) Follow(ctx context.Context, after int64, opts FollowOptions, fn func(Recorded) error) error {
	if opts.PollInterval <= 0 {
		opts.PollInterval = 100 * time.Millisecond
	}
	if opts.PageSize <= 0 {
		opts.PageSize = 5000
	}
	timer := time.NewTimer(opts.PollInterval)
	defer timer.Stop()
	for {
		var changed <-chan struct{}
		if opts.Waker != nil {
			changed = opts.Waker.Changed() // taken before the read, so no move is missed
		}
		// Drain page by page. Each page is read with its own mark, in one
		// read-only transaction on one server; a short page means nothing
		// else is committed up to that mark there. A mark below after (a
		// server further behind than the last) reads nothing and waits.
		streamed := s.streams(opts)
		for {
			var fnErr error
			n, mark, err := s.followPage(ctx, after, opts.PageSize, streamed, func(r Recorded) error {
				if fnErr = fn(r); fnErr != nil {
					return fnErr
				}
				after = r.GlobalPosition
				return nil
			})
			if err != nil {
				if fnErr == nil && ctx.Err() != nil {
					// Stopped mid-page: database/sql rolled the read back
					// when ctx ended, so the page's end reports
					// sql.ErrTxDone or a driver's cancel error; a stop is
					// ctx.Err() (seen once on HSQLDB in a clean run).
					return ctx.Err()
				}
				return err
			}
			if n < opts.PageSize {
				after = max(after, mark)
				break
			}
		}
		timer.Reset(opts.PollInterval)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-changed:
		case <-timer.C:
		}
	}
}
