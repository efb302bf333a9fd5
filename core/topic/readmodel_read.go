package topic

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/log"
	"github.com/tidemarkdb/tidemark/core/stmt"
)

// ReadTopic reads up to limit messages of the topic with position in
// (after, mark], in position order, the mark and the page read in one
// read-only transaction.
func (t *ReadModelTopic) ReadTopic(ctx context.Context, after int64, limit int) ([]ReadModelRecord, error) {
	recs, _, err := t.log().Page(ctx, -1, after, limit)
	return recs, err
}

// ReadPage returns up to limit messages of partition after position after
// and the mark they were read below, both from one read-only transaction.
func (t *ReadModelTopic) ReadPage(ctx context.Context, partition int, after int64, limit int) ([]ReadModelRecord, int64, error) {
	if err := t.checkPartition(partition); err != nil {
		return nil, 0, err
	}
	return t.log().Page(ctx, partition, after, limit)
}

// ReadPartitionUpTo reads up to limit messages of one partition with
// positions in (after, upto], in position order; upto must not exceed the
// mark (positions above it may still commit).
func (t *ReadModelTopic) ReadPartitionUpTo(ctx context.Context, partition int, after, upto int64, limit int) ([]ReadModelRecord, error) {
	if err := t.checkPartition(partition); err != nil {
		return nil, err
	}
	return t.log().UpTo(ctx, partition, after, upto, limit)
}

func (t *ReadModelTopic) checkPartition(partition int) error {
	if partition < 0 || partition >= t.e.Partitions {
		return fmt.Errorf("partition %d is out of range 0..%d", partition, t.e.Partitions-1)
	}
	return nil
}

// Follow calls fn for every message of the topic after position after, in
// position order, exactly once each, as the topic's mark passes it, as the
// capture topic's Follow does (opts.Waker: the shared mark's advancer, or
// nil to poll). It returns when ctx ends (ctx.Err()) or fn returns an
// error (as it is); transient database errors are retried without limit.
func (t *ReadModelTopic) Follow(ctx context.Context, after int64, opts FollowOptions, fn func(ReadModelRecord) error) error {
	part := -1
	if opts.Partition != nil {
		if part = *opts.Partition; t.checkPartition(part) != nil {
			return t.checkPartition(part)
		}
	}
	return log.Follow(ctx, t.log(), part, after, log.FollowOptions{Waker: opts.Waker, PollInterval: opts.PollInterval,
		PageSize: opts.PageSize, RetryMax: opts.RetryMax, OnRetry: opts.OnRetry}, fn)
}

// Log describes the topic as a log (log.Source), for a consumer's source.
func (t *ReadModelTopic) Log() log.Source[ReadModelRecord] { return t.log() }

// log: the mark read on the page's transaction, no start (nothing below a
// position is ever deleted), each page read whole before fn sees it.
func (t *ReadModelTopic) log() log.Source[ReadModelRecord] {
	return log.Source[ReadModelRecord]{
		Begin: t.e.BeginRead,
		Mark: func(ctx context.Context, q engine.Querier, _ int64) (int64, error) {
			return t.mark(ctx, q)
		},
		Range:    t.readRange,
		Position: func(r ReadModelRecord) int64 { return r.Position },
		Err:      t.e.Errors.Wrap,
	}
}

// readRange calls each with the topic's messages in (after, upto] of
// partition (-1 for all), at most limit, in position order.
func (t *ReadModelTopic) readRange(ctx context.Context, q engine.Querier, partition int, after, upto int64, limit int, each func(ReadModelRecord) error) error {
	var rows stmt.Rows[stmt.RMTopicRangeRow]
	var err error
	if partition >= 0 {
		rows, err = stmt.QueryRMTopicPartitionRange(ctx, t.e, q, stmt.RMTopicPartitionRangeParams{Topic: t.name, Partition: partition, After: after, Upto: upto, Limit: limit})
	} else {
		rows, err = stmt.QueryRMTopicRange(ctx, t.e, q, stmt.RMTopicRangeParams{Topic: t.name, After: after, Upto: upto, Limit: limit})
	}
	if err != nil {
		return fmt.Errorf("reading read-model topic %s: %w", t.name, err)
	}
	recs, err := scanReadModel(rows)
	if err != nil {
		return fmt.Errorf("reading read-model topic %s: %w", t.name, err)
	}
	for _, r := range recs {
		if err := each(r); err != nil {
			return err
		}
	}
	return nil
}

// ReadByID reads the topic's message id on q (the caller's transaction or
// the engine's *sql.DB), whatever the mark: a query table loads its read
// models' states through it. A message of another topic, or none, is a
// *NoRecordError; an id that is not a UUID is refused before any SQL
// (ErrInvalidMessage).
func (t *ReadModelTopic) ReadByID(ctx context.Context, q engine.Querier, id string) (ReadModelRecord, error) {
	u, err := uuid.Parse(id)
	if err != nil {
		return ReadModelRecord{}, &InvalidMessageError{Field: "id", Reason: "is not a UUID"}
	}
	id = u.String() // canonical, as stored
	r, err := stmt.QueryRowRMTopicByID(ctx, t.e, q, stmt.RMTopicByIDParams{ID: id})
	if errors.Is(err, sql.ErrNoRows) || (err == nil && r.Topic != t.name) {
		return ReadModelRecord{}, &NoRecordError{Topic: t.name, ID: id}
	}
	if err != nil {
		return ReadModelRecord{}, fmt.Errorf("reading message %s of read-model topic %s: %w", id, t.name, err)
	}
	return readModelRecord(r), nil
}

// Latest reads on q the message of key with the highest position (the read
// model's latest state, or its tombstone), whatever the mark. None is a
// *NoRecordError; a key no message can have (empty, invalid UTF-8, too
// long) is refused before any SQL (ErrInvalidMessage).
func (t *ReadModelTopic) Latest(ctx context.Context, q engine.Querier, key string) (ReadModelRecord, error) {
	if key == "" {
		return ReadModelRecord{}, &InvalidMessageError{Field: "key", Reason: "is empty"}
	}
	if err := checkKey(0, "key", key); err != nil {
		return ReadModelRecord{}, err
	}
	r, err := stmt.QueryRowRMTopicLatest(ctx, t.e, q, stmt.RMTopicLatestParams{Topic: t.name, Key: key})
	if errors.Is(err, sql.ErrNoRows) {
		return ReadModelRecord{}, &NoRecordError{Topic: t.name, Key: key}
	}
	if err != nil {
		return ReadModelRecord{}, fmt.Errorf("reading the latest message of key %q of read-model topic %s: %w", key, t.name, err)
	}
	return readModelRecord(r), nil
}

func scanReadModel(rows stmt.Rows[stmt.RMTopicRangeRow]) ([]ReadModelRecord, error) {
	defer rows.Close()
	var out []ReadModelRecord
	for rows.Next() {
		r, err := rows.Row()
		if err != nil {
			return nil, err
		}
		out = append(out, readModelRecord(r))
	}
	return out, rows.Err()
}

func readModelRecord(r stmt.RMTopicRangeRow) ReadModelRecord {
	return ReadModelRecord{ID: string(r.ID), Topic: r.Topic, Position: r.TopicPosition, Partition: int(r.PartitionKey),
		Key: r.ReadModelKey, Type: r.ReadModelType, Revision: r.ReadModelRevision, Payload: r.Payload, Metadata: r.Metadata,
		CascadeDepth: r.CascadeDepth, Deleted: r.Deleted, OccurredAt: time.Time(r.OccurredAt)}
}
