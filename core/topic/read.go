package topic

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/log"
)

// ReadTopic reads up to limit messages with position in (after, mark], in
// position order. A read after a position below the topic's start is a
// *MissingHistoryError: the messages it would have begun with are deleted.
func (t *Topic) ReadTopic(ctx context.Context, after int64, limit int) ([]Record, error) {
	return t.read(ctx, -1, after, limit)
}

// ReadPartition is ReadTopic restricted to one partition.
func (t *Topic) ReadPartition(ctx context.Context, partition int, after int64, limit int) ([]Record, error) {
	if partition < 0 || partition >= t.e.Partitions {
		return nil, fmt.Errorf("partition %d is out of range 0..%d", partition, t.e.Partitions-1)
	}
	return t.read(ctx, partition, after, limit)
}

// ReadPartitionUpTo reads up to limit messages of one partition with
// positions in (after, upto], in position order: a consumer reads up to the
// mark it read once for its whole poll, so a page never reaches past it
// (upto above the topic's mark is the caller's error: positions there may
// still commit). A read after a position below the topic's start is a
// *MissingHistoryError, as for ReadPartition; one round trip for the rows
// and one for the start (checked after the rows, see readUpTo).
func (t *Topic) ReadPartitionUpTo(ctx context.Context, partition int, after, upto int64, limit int) ([]Record, error) {
	if partition < 0 || partition >= t.e.Partitions {
		return nil, fmt.Errorf("partition %d is out of range 0..%d", partition, t.e.Partitions-1)
	}
	// Bounds and page in one read-only transaction, as readPage: history
	// below the start is reported even when there is nothing to read, so
	// the caller learns it now, not at the next message.
	tx, err := t.e.BeginRead(ctx)
	if err != nil {
		return nil, err
	}
	defer func() { _ = tx.Rollback() }() // after Commit: a no-op
	_, start, err := t.bounds(ctx, tx)
	if err != nil {
		return nil, err
	}
	if after < start {
		return nil, &MissingHistoryError{Topic: t.name, Position: after, TopicStart: start}
	}
	if upto <= after {
		return nil, nil
	}
	recs, err := t.readUpTo(ctx, tx, partition, after, upto, limit)
	if err != nil {
		return nil, err
	}
	return recs, t.e.Errors.Wrap(tx.Commit())
}

func (t *Topic) read(ctx context.Context, partition int, after int64, limit int) ([]Record, error) {
	recs, _, err := t.readPage(ctx, partition, after, limit)
	return recs, err
}

// readPage reads the topic's bounds and the page of up to limit messages
// in (after, mark] in one read-only transaction (engine.BeginRead), on one
// connection: a pool spread over replicas cannot read the mark on one
// server and the page on another that is behind. A short page means every
// message up to the returned mark was read.
func (t *Topic) readPage(ctx context.Context, partition int, after int64, limit int) ([]Record, int64, error) {
	tx, err := t.e.BeginRead(ctx)
	if err != nil {
		return nil, 0, err
	}
	defer func() { _ = tx.Rollback() }() // after Commit: a no-op
	mark, start, err := t.bounds(ctx, tx)
	if err != nil {
		return nil, 0, err
	}
	if after < start {
		return nil, 0, &MissingHistoryError{Topic: t.name, Position: after, TopicStart: start}
	}
	recs, err := t.readUpTo(ctx, tx, partition, after, mark, limit)
	if err != nil {
		return nil, 0, err
	}
	return recs, mark, t.e.Errors.Wrap(tx.Commit())
}

// readUpTo reads (after, upto] on q and then checks the start again:
// retention moves the start in the transaction that deletes, so a page read
// while it deleted below after is reported, never returned with a hole (at
// read committed the second check sees that commit; in one snapshot the
// page and the start agree anyway).
func (t *Topic) readUpTo(ctx context.Context, q engine.Querier, partition int, after, upto int64, limit int) ([]Record, error) {
	if limit <= 0 {
		limit = 1000
	}
	if upto <= after {
		return nil, nil
	}
	id := dialect.TopicRange
	args := map[string]any{"after": after, "upto": upto, "limit": limit}
	if partition >= 0 {
		id, args["partition"] = dialect.TopicPartitionRange, partition
	}
	rows, err := t.e.Query(ctx, q, id, nil, args)
	if err != nil {
		return nil, fmt.Errorf("reading topic %s: %w", t.name, err)
	}
	recs, err := scanRecords(rows)
	if err != nil {
		return nil, t.e.Errors.Wrap(fmt.Errorf("reading topic %s: %w", t.name, err))
	}
	if _, start, err := t.bounds(ctx, q); err != nil {
		return nil, err
	} else if after < start {
		return nil, &MissingHistoryError{Topic: t.name, Position: after, TopicStart: start}
	}
	return recs, nil
}

// Waker tells a follower the mark moved; *hwm.Advancer implements it.
type Waker = log.Waker

// FollowOptions configure Follow.
type FollowOptions struct {
	// Partition, when not nil, follows that partition only.
	Partition *int
	// Waker wakes the follower as soon as a local advancer moves the mark;
	// without one (or for marks moved by another process) it polls.
	Waker        Waker
	PollInterval time.Duration // default 100ms
	PageSize     int           // default 5000, as the event store's Follow
}

// Follow calls fn for every message after position after, in position
// order, exactly once each, as the topic's mark passes it. It returns when
// ctx ends (ctx.Err()), fn returns an error, or history below the topic's
// start is missing (*MissingHistoryError).
func (t *Topic) Follow(ctx context.Context, after int64, opts FollowOptions, fn func(Record) error) error {
	if opts.PollInterval <= 0 {
		opts.PollInterval = 100 * time.Millisecond
	}
	if opts.PageSize <= 0 {
		opts.PageSize = 5000
	}
	part := -1
	if opts.Partition != nil {
		if part = *opts.Partition; part < 0 || part >= t.e.Partitions {
			return fmt.Errorf("partition %d is out of range 0..%d", part, t.e.Partitions-1)
		}
	}
	timer := time.NewTimer(opts.PollInterval)
	defer timer.Stop()
	for {
		var changed <-chan struct{}
		if opts.Waker != nil {
			changed = opts.Waker.Changed() // before the read, so no move is missed
		}
		// Drain page by page, each page with its own mark in one read-only
		// transaction (see readPage); a mark below after (a server further
		// behind) reads nothing and waits.
		for {
			page, mark, err := t.readPage(ctx, part, after, opts.PageSize)
			if err != nil {
				if ctx.Err() != nil {
					// Stopped mid-read: database/sql rolled the read back
					// when ctx ended, so the page's end reports
					// sql.ErrTxDone or a driver's cancel error; a stop is
					// ctx.Err() (seen once in capture/concurrent_publishers_tail_read
					// on the example dialect, as on the event store's Follow).
					return ctx.Err()
				}
				return err
			}
			for _, r := range page {
				if err := fn(r); err != nil {
					return err
				}
				after = r.Position
			}
			if len(page) < opts.PageSize {
				after = max(after, mark) // nothing else committed at or below the mark
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

func scanRecords(rows *sql.Rows) ([]Record, error) {
	defer rows.Close()
	var out []Record
	for rows.Next() {
		var r Record
		var id anyText
		var at anyTime
		var part int64
		var key sql.NullString
		if err := rows.Scan(&id, &r.Position, &part, &r.Type, &r.Revision, &r.Payload, &r.Metadata, &at, &key); err != nil {
			return nil, err
		}
		r.ID, r.Partition, r.OccurredAt, r.Key = string(id), int(part), time.Time(at), key.String
		out = append(out, r)
	}
	return out, rows.Err()
}

// The driver-value scanners are the engine's (one set for every area).
type (
	anyText = engine.UUIDText
	anyTime = engine.UTCTime
)

// ReadPage returns up to limit messages of partition after position after
// and the mark they were read below, both from one read-only transaction
// (a consumer over replicas advances past a short page only to that mark).
// A read after a position below the topic's start is a
// *MissingHistoryError.
func (t *Topic) ReadPage(ctx context.Context, partition int, after int64, limit int) ([]Record, int64, error) {
	if partition < 0 || partition >= t.e.Partitions {
		return nil, 0, fmt.Errorf("partition %d is out of range 0..%d", partition, t.e.Partitions-1)
	}
	return t.readPage(ctx, partition, after, limit)
}
