package log

import (
	"context"
	"time"

	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/sqlerr"
)

// FollowOptions configure Follow.
type FollowOptions struct {
	// Waker wakes the follower as soon as a local advancer moves the mark.
	// Without one (or for marks moved by another process) the follower
	// polls every PollInterval.
	Waker        Waker
	PollInterval time.Duration // default 100ms
	// PageSize is the most records one query returns (default 5000: a page
	// is one round trip; docs/performance.md says why not fewer).
	PageSize int
	// Buffered reads each page whole before fn sees its first record, so
	// no connection is held while fn runs. By default (false) fn is called
	// row by row as the page is read (less memory and GC, see
	// docs/performance.md), on the connection of the page's read
	// transaction: a handler that uses the database then needs another
	// connection of the pool. Where the log cannot stream (Source.Streams,
	// e.g. a pool of one connection) Follow buffers on its own; set
	// Buffered when the pool is small and several handlers use it.
	Buffered bool
	// RetryMax caps the backoff between reads of a page that failed with a
	// transient error (default 1s: a follower resumes within a second of
	// the cause going away).
	RetryMax time.Duration
	// OnRetry, when set, is called before each such retry with the number
	// of failures in a row before this one (0 for the first) and the
	// error: where a caller logs or counts them (Follow retries without
	// limit; a caller wanting one cancels ctx).
	OnRetry func(failures int, err error)
	// Passed, when set, is called each time a read reaches the mark (a
	// page shorter than PageSize), with the position Follow has then
	// passed: fn has seen every record at or below it. It moves past
	// positions that hold no record (abandoned, or another partition's),
	// which fn never sees: what a caller waiting for a position needs.
	Passed func(position int64)
}

func (o FollowOptions) withDefaults() FollowOptions {
	if o.PollInterval <= 0 {
		o.PollInterval = 100 * time.Millisecond
	}
	if o.PageSize <= 0 {
		o.PageSize = 5000
	}
	if o.RetryMax <= 0 {
		o.RetryMax = time.Second
	}
	return o
}

// Follow calls fn for every record of partition (-1 for all) after
// position after, in position order, exactly once each, as the log's mark
// passes it: never a record whose transaction may still commit before an
// earlier one. It returns when ctx ends (with ctx.Err(), however the stop
// fell: mid-page, or between a page's last row and its commit, where
// database/sql has already rolled the read back) or fn returns an error
// (returned as it is). A transient database error (sqlerr.IsTransient, by
// the dialect's classification: a recovery conflict on a lagging replica,
// a lost connection, a lock timeout) is retried without limit, after a
// backoff that grows to RetryMax, from the last position fn accepted:
// nothing is delivered twice or skipped. Any other error reading a page
// (such as the source's missing history) is returned, possibly after fn
// saw some of the page's records.
func Follow[R any](ctx context.Context, src Source[R], partition int, after int64, opts FollowOptions, fn func(R) error) error {
	opts = opts.withDefaults()
	timer := time.NewTimer(opts.PollInterval)
	defer timer.Stop()
	streamed := src.Streams && !opts.Buffered
	for {
		var changed <-chan struct{}
		if opts.Waker != nil {
			changed = opts.Waker.Changed() // taken before the read, so no move is missed
		}
		// Drain page by page. Each page is read with its own mark, in one
		// read-only transaction on one server; a short page means nothing
		// else is committed up to that mark there. A mark below after (a
		// server further behind than the last) reads nothing and waits.
		failures := 0
		for {
			var fnErr error
			n, mark, err := src.followPage(ctx, partition, after, opts.PageSize, streamed, func(r R) error {
				if fnErr = fn(r); fnErr != nil {
					return fnErr
				}
				after = src.Position(r)
				return nil
			})
			if err != nil {
				if err = followFailed(ctx, opts, fnErr, err, failures); err != nil {
					return err
				}
				failures++
				continue // the page again, from the last record fn accepted
			}
			failures = 0
			if n < opts.PageSize {
				after = max(after, mark)
				if opts.Passed != nil {
					opts.Passed(after)
				}
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

// followPage reads one page and calls fn for each record in position
// order. Streamed, fn sees a row as soon as it is scanned, and no page is
// materialised (less memory and GC, docs/performance.md); buffered, the
// page is read whole and its transaction ends first. It returns how many records fn saw and the
// mark; fn's error is returned as fn returned it.
func (s Source[R]) followPage(ctx context.Context, partition int, after int64, limit int, streamed bool, fn func(R) error) (int, int64, error) {
	if streamed {
		return s.read(ctx, partition, after, limit, nil, fn)
	}
	page, mark, err := s.Page(ctx, partition, after, limit)
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

// followFailed decides what a page that ended in err (fnErr: fn's, if fn
// failed) means for Follow: nil after waiting out the backoff of a
// transient error (the caller reads the page again), else the error Follow
// returns.
func followFailed(ctx context.Context, opts FollowOptions, fnErr, err error, failures int) error {
	switch {
	case fnErr != nil:
		return err
	case ctx.Err() != nil:
		// Stopped during the page: database/sql rolls the read back when
		// ctx ends, so the page's end reports sql.ErrTxDone or a driver's
		// cancel error. A stop is ctx.Err().
		return ctx.Err()
	case !sqlerr.IsTransient(err):
		return err
	}
	if opts.OnRetry != nil {
		opts.OnRetry(failures, err)
	}
	// Full jitter (followers that failed together do not retry together),
	// from 1 ms doubling to RetryMax, without a bound on the tries.
	return engine.TransientRetry{Unbounded: true, Initial: time.Millisecond, Max: opts.RetryMax}.Backoff(ctx, failures)
}
