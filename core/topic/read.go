package topic

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/log"
	"github.com/tidemarkdb/tidemark/core/stmt"
)

// ReadTopic reads up to limit messages with position in (after, mark], in
// position order. A read after a position below the topic's start is a
// *MissingHistoryError: the messages it would have begun with are deleted.
func (t *Topic) ReadTopic(ctx context.Context, after int64, limit int) ([]Record, error) {
	recs, _, err := t.log().Page(ctx, -1, after, limit)
	return recs, err
}

// ReadPartition is ReadTopic restricted to one partition.
func (t *Topic) ReadPartition(ctx context.Context, partition int, after int64, limit int) ([]Record, error) {
	if err := t.checkPartition(partition); err != nil {
		return nil, err
	}
	recs, _, err := t.log().Page(ctx, partition, after, limit)
	return recs, err
}

// ReadPartitionUpTo reads up to limit messages of one partition with
// positions in (after, upto], in position order: a consumer reads up to the
// mark it read once for its whole poll, so a page never reaches past it
// (upto above the topic's mark is the caller's error: positions there may
// still commit). A read after a position below the topic's start is a
// *MissingHistoryError, as for ReadPartition, reported even when there is
// nothing to read, so the caller learns it now, not at the next message;
// the start is read in the same read-only transaction as the rows, before
// them and again after them (see log).
func (t *Topic) ReadPartitionUpTo(ctx context.Context, partition int, after, upto int64, limit int) ([]Record, error) {
	if err := t.checkPartition(partition); err != nil {
		return nil, err
	}
	return t.log().UpTo(ctx, partition, after, upto, limit)
}

// ReadPage returns up to limit messages of partition after position after
// and the mark they were read below, both from one read-only transaction
// (a consumer over replicas advances past a short page only to that mark).
// A read after a position below the topic's start is a
// *MissingHistoryError.
func (t *Topic) ReadPage(ctx context.Context, partition int, after int64, limit int) ([]Record, int64, error) {
	if err := t.checkPartition(partition); err != nil {
		return nil, 0, err
	}
	return t.log().Page(ctx, partition, after, limit)
}

func (t *Topic) checkPartition(partition int) error {
	if partition < 0 || partition >= t.e.Partitions {
		return fmt.Errorf("partition %d is out of range 0..%d", partition, t.e.Partitions-1)
	}
	return nil
}

// Log describes the topic as a log (log.Source): what a reader over any
// log, such as a consumer's source, builds on.
func (t *Topic) Log() log.Source[Record] { return t.log() }

// log describes the topic to the log's page read and Follow: its bounds
// (mark and start) read in one statement, a read below the start refused.
// Range checks the start again after the rows: retention moves the start
// in the transaction that deletes, so a page read while it deleted below
// after is reported, never returned with a hole (at read committed the
// second check sees that commit; in one snapshot the page and the start
// agree anyway). That check must see the whole page before a handler
// does, so Follow never streams a topic's rows.
func (t *Topic) log() log.Source[Record] {
	return log.Source[Record]{
		Begin: t.e.BeginRead,
		Mark: func(ctx context.Context, q engine.Querier, after int64) (int64, error) {
			mark, _, err := t.boundsFrom(ctx, q, after)
			return mark, err
		},
		Start: func(ctx context.Context, q engine.Querier, after int64) error {
			_, _, err := t.boundsFrom(ctx, q, after)
			return err
		},
		Range:    t.readRange,
		Position: func(r Record) int64 { return r.Position },
		Err:      t.dbErr,
	}
}

// boundsFrom reads the topic's bounds on q, refusing a read after a
// position below its start.
func (t *Topic) boundsFrom(ctx context.Context, q engine.Querier, after int64) (mark, start int64, err error) {
	if mark, start, err = t.bounds(ctx, q); err != nil {
		return 0, 0, err
	}
	if after < start {
		return 0, 0, &MissingHistoryError{Topic: t.name, Position: after, TopicStart: start}
	}
	return mark, start, nil
}

// dbErr classifies a database error of a read; the topic's own errors are
// returned as they are.
func (t *Topic) dbErr(err error) error {
	if err == nil || errors.Is(err, ErrMissingHistory) {
		return err
	}
	return t.e.Errors.Wrap(err)
}

// readRange calls each with the messages in (after, upto] of partition (-1
// for all), at most limit, in position order, once the page is read whole
// and the start checked again.
func (t *Topic) readRange(ctx context.Context, q engine.Querier, partition int, after, upto int64, limit int, each func(Record) error) error {
	var rows stmt.Rows[stmt.TopicRangeRow]
	var err error
	if partition >= 0 {
		rows, err = stmt.QueryTopicPartitionRange(ctx, t.e, q, stmt.TopicPartitionRangeParams{Partition: partition, After: after, Upto: upto, Limit: limit})
	} else {
		rows, err = stmt.QueryTopicRange(ctx, t.e, q, stmt.TopicRangeParams{After: after, Upto: upto, Limit: limit})
	}
	if err != nil {
		return fmt.Errorf("reading topic %s: %w", t.name, err)
	}
	recs, err := scanRecords(rows)
	if err != nil {
		return fmt.Errorf("reading topic %s: %w", t.name, err)
	}
	if _, _, err := t.boundsFrom(ctx, q, after); err != nil {
		return err
	}
	for _, r := range recs {
		if err := each(r); err != nil {
			return err
		}
	}
	return nil
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
	// RetryMax caps the backoff between reads of a page that failed with a
	// transient error (default 1s).
	RetryMax time.Duration
	// OnRetry, when set, is called before each such retry with the number
	// of failures in a row before this one (0 for the first) and the error.
	OnRetry func(failures int, err error)
}

// Follow calls fn for every message after position after, in position
// order, exactly once each, as the topic's mark passes it. It returns when
// ctx ends (ctx.Err(), however the stop fell), fn returns an error (as it
// is), or history below the topic's start is missing
// (*MissingHistoryError). A transient database error is retried without
// limit, after a backoff that grows to RetryMax, from the last position fn
// accepted, as the event store's Follow does (log.Follow). Each page is
// read whole, and its start checked, before fn sees its first message.
func (t *Topic) Follow(ctx context.Context, after int64, opts FollowOptions, fn func(Record) error) error {
	part := -1
	if opts.Partition != nil {
		if part = *opts.Partition; part < 0 || part >= t.e.Partitions {
			return fmt.Errorf("partition %d is out of range 0..%d", part, t.e.Partitions-1)
		}
	}
	return log.Follow(ctx, t.log(), part, after, log.FollowOptions{Waker: opts.Waker, PollInterval: opts.PollInterval,
		PageSize: opts.PageSize, RetryMax: opts.RetryMax, OnRetry: opts.OnRetry}, fn)
}

func scanRecords(rows stmt.Rows[stmt.TopicRangeRow]) ([]Record, error) {
	defer rows.Close()
	var out []Record
	for rows.Next() {
		r, err := rows.Row()
		if err != nil {
			return nil, err
		}
		out = append(out, Record{ID: string(r.ID), Position: r.GlobalPosition, Partition: int(r.PartitionKey), Type: r.EventType,
			Revision: r.EventRevision, Payload: r.Payload, Metadata: r.Metadata, OccurredAt: time.Time(r.OccurredAt), Key: r.MessageKey.String})
	}
	return out, rows.Err()
}
