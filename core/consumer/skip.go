package consumer

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/stmt"
)

// ErrInvalidSkip: a skip whose position, partition or key the table cannot
// hold; refused before any SQL.
var ErrInvalidSkip = errors.New("invalid skip")

// MaxKeyLength is how many characters resolved_key holds (VARCHAR(255)).
const MaxKeyLength = 255

// Skip is one CONSUMER_SKIPPED_MESSAGES row: a message every instance of
// the consumer passes over without applying, recording or halting.
type Skip struct {
	Source    string
	Partition int
	Position  int64
	// Key is the key the skip holds for ("" for a message without one).
	Key string
	// EveryKey: the message is skipped for every key (its keys could not
	// be told).
	EveryKey bool
}

// skipNamespace roots the deterministic skip ids (UUID version 5).
var skipNamespace = uuid.MustParse("6f1d4a8e-5b0c-4c59-9a57-2d3e1c7b8f10")

// SkipID is the id of a skip: a UUID derived from the consumer, the
// source, the partition, the position and the key (and whether it holds
// for every key), so a skip recorded twice, by any instance, is one row.
func SkipID(consumerID string, s Skip) string {
	every := "0"
	if s.EveryKey {
		every = "1"
	}
	name := consumerID + "\x00" + s.Source + "\x00" + strconv.Itoa(s.Partition) + "\x00" +
		strconv.FormatInt(s.Position, 10) + "\x00" + every + "\x00" + s.Key
	return uuid.NewSHA1(skipNamespace, []byte(name)).String()
}

// InvalidSkipError says which part of a skip was refused.
type InvalidSkipError struct {
	Skip   Skip
	Reason string
}

func (e *InvalidSkipError) Error() string {
	return fmt.Sprintf("skip %s/%d position %d key %q: %s", e.Skip.Source, e.Skip.Partition, e.Skip.Position, e.Skip.Key, e.Reason)
}

// Unwrap makes errors.Is(err, ErrInvalidSkip) hold.
func (e *InvalidSkipError) Unwrap() error { return ErrInvalidSkip }

func checkSkip(s Skip) error {
	switch {
	case s.Position < 1:
		return &InvalidSkipError{s, "positions start at 1"}
	case s.Partition < 0 || s.Partition > 32767: // partition_no is a SMALLINT
		return &InvalidSkipError{s, "partition outside 0..32767"}
	case !utf8.ValidString(s.Key):
		return &InvalidSkipError{s, "key is not valid UTF-8"}
	case utf8.RuneCountInString(s.Key) > MaxKeyLength:
		return &InvalidSkipError{s, fmt.Sprintf("key longer than %d characters", MaxKeyLength)}
	case s.EveryKey && s.Key != "":
		return &InvalidSkipError{s, "a skip for every key has no key"}
	}
	return nil
}

// RecordSkip records s for consumer id in its own transaction; recording
// it again changes nothing.
func (r *Registry) RecordSkip(ctx context.Context, id string, s Skip) error {
	if err := checkSkip(s); err != nil {
		return err
	}
	return r.inTx(ctx, func(tx *sql.Tx) error { return r.recordSkip(ctx, tx, id, s) })
}

// recordSkip inserts the skip on q (a transaction) unless it exists. It
// checks first, because a failed INSERT aborts the transaction on
// PostgreSQL; two instances recording the same skip at once leave one
// with a unique violation, which its caller retries as a whole (then the
// row exists).
func (r *Registry) recordSkip(ctx context.Context, q engine.Querier, id string, s Skip) error {
	if err := checkSkip(s); err != nil {
		return err
	}
	sid := SkipID(id, s)
	_, err := stmt.QueryRowSkippedExists(ctx, r.e, q, stmt.SkippedExistsParams{ID: sid})
	switch {
	case err == nil:
		return nil
	case !errors.Is(err, sql.ErrNoRows):
		return err
	}
	_, err = stmt.ExecSkippedInsert(ctx, r.e, q, stmt.SkippedInsertParams{
		ID: sid, ConsumerID: id, SourceName: s.Source, PartitionNo: s.Partition,
		MessagePosition: s.Position, ResolvedKey: s.Key, EveryKey: s.EveryKey})
	if err != nil {
		return fmt.Errorf("consumer %s: skip %s/%d@%d: %w", r.label(ctx, id), s.Source, s.Partition, s.Position, err)
	}
	return nil
}

// Skips returns the skips of consumer id on source above position after.
func (r *Registry) Skips(ctx context.Context, id, source string, after int64) ([]Skip, error) {
	return r.skips(ctx, r.e.DB, id, source, after)
}

func (r *Registry) skips(ctx context.Context, q engine.Querier, id, source string, after int64) ([]Skip, error) {
	rows, err := stmt.QuerySkippedRead(ctx, r.e, q, stmt.SkippedReadParams{ConsumerID: id, SourceName: source, After: after})
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Skip
	for rows.Next() {
		s, err := rows.Row()
		if err != nil {
			return nil, err
		}
		out = append(out, Skip{Source: source, Partition: s.PartitionNo, Position: s.MessagePosition, Key: s.ResolvedKey, EveryKey: s.EveryKey})
	}
	return out, rows.Err()
}
