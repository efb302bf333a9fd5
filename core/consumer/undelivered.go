package consumer

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"sort"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/stmt"
)

// KeyHash is CONSUMER_UNDELIVERED_MESSAGES.key_hash of a key: FNV-1a 64
// of its UTF-8 bytes, as a signed 64-bit integer (the column is a BIGINT;
// it serves the unique constraint only).
func KeyHash(key string) int64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(key))
	return int64(h.Sum64())
}

// UndeliveredRow is one CONSUMER_UNDELIVERED_MESSAGES row without its
// message copy: what the runner keeps of a held message and what the
// operator lists.
type UndeliveredRow struct {
	ID        string         `json:"id"`
	Source    string         `json:"source"`
	Partition int            `json:"partition"`
	Key       string         `json:"key"`
	Position  int64          `json:"position"`
	Status    DeliveryStatus `json:"status"`
	// FailureCount is how often it failed (0 while waiting, after a
	// resume, and for a follower of a DEAD_LETTER_KEY key).
	FailureCount int `json:"failure_count"`
	// NextRetryAt is when a FAILED row is tried again, in UTC; zero for at
	// once (NULL; null in JSON).
	NextRetryAt time.Time `json:"next_retry_at"`
	// FailureReason is the last failure's "<type>: <message>", at most
	// MaxFailureReason characters; "" for NULL.
	FailureReason string    `json:"failure_reason,omitempty"`
	RecordedAt    time.Time `json:"recorded_at"`
}

// IsDeadLetter says the row waits for an operator (DEAD_LETTER or
// DEAD_LETTER_KEY).
func (u UndeliveredRow) IsDeadLetter() bool {
	return u.Status.Retryable()
}

// MarshalJSON writes a zero NextRetryAt (NULL) as null, the fields in
// declaration order.
func (u UndeliveredRow) MarshalJSON() ([]byte, error) {
	var next *time.Time
	if !u.NextRetryAt.IsZero() {
		next = &u.NextRetryAt
	}
	return json.Marshal(struct {
		ID            string         `json:"id"`
		Source        string         `json:"source"`
		Partition     int            `json:"partition"`
		Key           string         `json:"key"`
		Position      int64          `json:"position"`
		Status        DeliveryStatus `json:"status"`
		FailureCount  int            `json:"failure_count"`
		NextRetryAt   *time.Time     `json:"next_retry_at"`
		FailureReason string         `json:"failure_reason,omitempty"`
		RecordedAt    time.Time      `json:"recorded_at"`
	}{u.ID, u.Source, u.Partition, u.Key, u.Position, u.Status, u.FailureCount, next, u.FailureReason, u.RecordedAt})
}

// UndeliveredRows returns every undelivered row of consumer id, in source,
// partition and position order.
func (r *Registry) UndeliveredRows(ctx context.Context, id string) ([]UndeliveredRow, error) {
	rows, err := stmt.QueryUndeliveredRead(ctx, r.e, r.e.DB, stmt.UndeliveredReadParams{ConsumerID: id})
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []UndeliveredRow
	for rows.Next() {
		row, err := rows.Row()
		if err != nil {
			return nil, err
		}
		out = append(out, UndeliveredRow{ID: row.ID, Source: row.SourceName, Partition: row.PartitionNo, Key: row.ResolvedKey,
			Position: row.MessagePosition, Status: DeliveryStatus(row.Status), FailureCount: row.FailureCount,
			NextRetryAt: time.Time(row.NextRetryAt), FailureReason: row.FailureReason.String, RecordedAt: time.Time(row.RecordedAt)})
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Source != b.Source {
			return a.Source < b.Source
		}
		if a.Partition != b.Partition {
			return a.Partition < b.Partition
		}
		return a.Position < b.Position
	})
	return out, nil
}

// failureReason is "<error type>: <message>" cut to MaxFailureReason
// characters (runes, so a multi-byte character is never split; invalid
// UTF-8 is replaced, the column holds text).
func failureReason(err error) string {
	inner := err
	for {
		u := errors.Unwrap(inner)
		if u == nil {
			break
		}
		inner = u
	}
	s := fmt.Sprintf("%T: %s", inner, err.Error())
	if !utf8.ValidString(s) {
		s = string([]rune(s)) // replaces invalid bytes with U+FFFD
	}
	if utf8.RuneCountInString(s) <= MaxFailureReason {
		return s
	}
	return string([]rune(s)[:MaxFailureReason])
}

func nullTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	// Microseconds: what every engine's TIMESTAMP keeps (DATETIME(6)).
	t = t.UTC().Truncate(time.Microsecond)
	return &t
}

func nullString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// insertUndelivered records u (its ID is generated) with its copy on q.
func (r *Registry) insertUndelivered(ctx context.Context, q engine.Querier, consumerID string, u *UndeliveredRow, cp *string) error {
	u.ID = uuid.NewString()
	_, err := stmt.ExecUndeliveredInsert(ctx, r.e, q, stmt.UndeliveredInsertParams{
		ID: u.ID, ConsumerID: consumerID, SourceName: u.Source, ResolvedKey: u.Key, KeyHash: KeyHash(u.Key),
		MessagePosition: u.Position, PartitionNo: u.Partition, Status: string(u.Status), FailureCount: u.FailureCount,
		NextRetryAt: nullTime(u.NextRetryAt), FailureReason: nullString(u.FailureReason), RecordedAt: nullTime(u.RecordedAt),
		MessageCopy: cp})
	if err != nil {
		return fmt.Errorf("recording %s/%d position %d key %q as %s: %w", u.Source, u.Partition, u.Position, u.Key, u.Status, err)
	}
	return nil
}

// updateUndelivered writes u's status, count, next retry and reason while
// the row is still (from, fromCount); false: an operator changed it.
func (r *Registry) updateUndelivered(ctx context.Context, q engine.Querier, u UndeliveredRow, from DeliveryStatus, fromCount int) (bool, error) {
	res, err := stmt.ExecUndeliveredUpdate(ctx, r.e, q, stmt.UndeliveredUpdateParams{
		ID: u.ID, Status: string(u.Status), FailureCount: u.FailureCount, NextRetryAt: nullTime(u.NextRetryAt),
		FailureReason: nullString(u.FailureReason), FromStatus: string(from), FromCount: fromCount})
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n > 0, err
}

// deleteUndelivered deletes row id while its status is from.
func (r *Registry) deleteUndelivered(ctx context.Context, q engine.Querier, id string, from DeliveryStatus) (bool, error) {
	res, err := stmt.ExecUndeliveredDelete(ctx, r.e, q, stmt.UndeliveredDeleteParams{ID: id, FromStatus: string(from)})
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n > 0, err
}

// holdKeyDead turns the key's WAITING rows into DEAD_LETTER_KEY followers.
func (r *Registry) holdKeyDead(ctx context.Context, q engine.Querier, consumerID string, u UndeliveredRow) error {
	_, err := stmt.ExecUndeliveredHoldKey(ctx, r.e, q, stmt.UndeliveredHoldKeyParams{
		ConsumerID: consumerID, SourceName: u.Source, PartitionNo: u.Partition, KeyHash: KeyHash(u.Key),
		ResolvedKey: u.Key, Status: string(StatusDeadLetterKey), FromStatus: string(StatusWaiting)})
	return err
}

// messageCopy reads row id's copy; ok false when it is NULL (the topic no
// longer held the message: its retry applies nothing).
func (r *Registry) messageCopy(ctx context.Context, id string) (string, bool, error) {
	row, err := stmt.QueryRowUndeliveredCopy(ctx, r.e, r.e.DB, stmt.UndeliveredCopyParams{ID: id})
	if err != nil {
		return "", false, fmt.Errorf("reading the message copy of undelivered row %s: %w", id, err)
	}
	return row.MessageCopy.String, row.MessageCopy.Valid, nil
}

// haltIn halts consumer id for reason on q (a transaction), from state
// from only (running, or REBUILDING while its runner polls a replay);
// false when it was no longer in it.
func (r *Registry) haltIn(ctx context.Context, q engine.Querier, id string, from State, reason HaltReason) (bool, error) {
	return r.writeState(ctx, q, id, from, Halted, moveHalt, reason)
}

// inTx runs fn in a transaction of its own (engine.InTx: retried whole
// within the core's bound on a transient error).
func (r *Registry) inTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	return r.e.InTx(ctx, engine.OpWrite, engine.DefaultTransientRetry, fn)
}

// inWriterTx is inTx queued behind this process's other writers on an
// engine that runs one writing transaction at a time (engine.InWriterTx):
// for the runner's checkpoint saves, which run no caller code.
func (r *Registry) inWriterTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	return r.e.InWriterTx(ctx, engine.OpWrite, engine.DefaultTransientRetry, fn)
}

// inTx1 runs fn in a transaction of its own, once: the caller retries.
func (r *Registry) inTx1(ctx context.Context, fn func(tx *sql.Tx) error) error {
	return r.e.InTx(ctx, engine.OpWrite, engine.TransientRetry{Attempts: 1}, fn)
}
