package eventstore

import (
	"context"

	"github.com/tidemarkdb/tidemark/core/log"
)

// Waker tells a follower the mark moved; *hwm.Advancer implements it.
type Waker = log.Waker

// FollowOptions configure Follow (the log's options: Waker, PollInterval,
// PageSize, Buffered, RetryMax, OnRetry).
type FollowOptions = log.FollowOptions

// Follow calls fn for every event after position after, in global order,
// exactly once each, as the high-water mark passes it: never an event whose
// transaction may still commit before an earlier one. It returns when ctx
// ends (with ctx.Err(), however the stop fell: mid-page, or between a
// page's last row and its commit, where database/sql has already rolled
// the read back) or fn returns an error (returned as it is). A transient
// database error (sqlerr.IsTransient, by the dialect's classification: a
// recovery conflict on a lagging replica, a lost connection, a lock timeout)
// is retried without limit, after a backoff that grows to RetryMax, from
// the last position fn accepted: nothing is delivered twice or skipped. Any
// other error reading a page is returned, possibly after fn saw some of
// the page's events. See log.Follow.
func (s *Store) Follow(ctx context.Context, after int64, opts FollowOptions, fn func(Recorded) error) error {
	return log.Follow(ctx, s.log(), -1, after, opts, fn)
}
