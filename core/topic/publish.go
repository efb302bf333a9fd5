package topic

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/log"
	"github.com/tidemarkdb/tidemark/core/log/position"
	"github.com/tidemarkdb/tidemark/core/stmt"
	"github.com/tidemarkdb/tidemark/internal/jsonvalid"
)

// PartitionKey is the partition of a message key among n partitions: the
// log's partition function, so a key is in the same partition on every log.
func PartitionKey(key string, n int) int { return log.Partition(key, n) }

// Publish publishes msgs in a transaction of its own (all or nothing) and
// returns their positions, in order.
func (t *Topic) Publish(ctx context.Context, msgs ...Message) ([]int64, error) {
	rows, err := t.check(msgs)
	if err != nil {
		return nil, err
	}
	// Where positions queue publishes until commit anyway (a counter row)
	// or the engine runs one writer at a time, queue this process's own
	// here, not on the database lock.
	locked := false
	lock := func() { t.writeMu.Lock(); locked = true }
	if t.e.Cat.Locks.SerializesWriters {
		lock()
	} else {
		t.positions.Hold(lock)
	}
	defer func() {
		if locked {
			t.writeMu.Unlock()
		}
	}()
	tx, err := t.e.BeginTx(ctx, engine.OpAppend)
	if err != nil {
		return nil, err
	}
	pos, err := t.publish(ctx, tx, rows)
	if err != nil {
		_ = tx.Rollback()
		return nil, err
	}
	if err := tx.Commit(); err != nil {
		return nil, t.e.Errors.Wrap(err)
	}
	if t.nudger != nil {
		t.nudger()
	}
	return pos, nil
}

// PublishTx publishes msgs inside the caller's transaction, so they commit
// (or roll back) with the caller's own writes. tx must come from the
// engine's *sql.DB. On error the caller must roll back. The topic's
// advancer publishes them at its next poll after the commit.
func (t *Topic) PublishTx(ctx context.Context, tx *sql.Tx, msgs ...Message) ([]int64, error) {
	rows, err := t.check(msgs)
	if err != nil {
		return nil, err
	}
	return t.publish(ctx, tx, rows)
}

// row is one message's binds (its position drawn by the insert, or
// stamped: see publish).
type row = stmt.TopicInsertDrawnParams

// check refuses bad input before any SQL and builds each row's binds.
func (t *Topic) check(msgs []Message) ([]row, error) {
	now := time.Now()
	rows := make([]row, 0, len(msgs))
	for i, m := range msgs {
		if err := checkMessage(i, m); err != nil {
			return nil, err
		}
		id := m.ID
		if id == "" {
			u, err := uuid.NewV7()
			if err != nil {
				return nil, err
			}
			id = u.String()
		} else {
			u, err := uuid.Parse(id)
			if err != nil {
				return nil, &InvalidMessageError{Index: i, Field: "id", Reason: "is not a UUID"}
			}
			id = u.String() // canonical: 36 lower-case characters on every engine
		}
		at := m.OccurredAt
		if at.IsZero() {
			at = now
		}
		var key, meta *string
		if m.Key != "" {
			key = &m.Key
		}
		if m.Metadata != nil {
			s := string(m.Metadata)
			meta = &s
		}
		rows = append(rows, row{
			ID: id, PartitionKey: PartitionKey(m.Key, t.e.Partitions), EventType: m.Type,
			EventRevision: m.Revision, Payload: string(m.Payload), Metadata: meta,
			OccurredAt: t.e.Cat.Facts.CutEventTime(at), MessageKey: key,
		})
	}
	return rows, nil
}

func checkMessage(i int, m Message) error {
	if err := checkKey(i, "key", m.Key); err != nil {
		return err
	}
	if m.Type == "" {
		return &InvalidMessageError{Index: i, Field: "type", Reason: "is empty"}
	}
	if err := checkKey(i, "type", m.Type); err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		b    []byte
		opt  bool
	}{{"payload", m.Payload, false}, {"metadata", m.Metadata, true}} {
		if f.opt && f.b == nil {
			continue
		}
		if err := checkText(i, f.name, string(f.b)); err != nil {
			return err
		}
		if !jsonvalid.Valid(f.b) {
			return &InvalidMessageError{Index: i, Field: f.name, Reason: "is not a JSON document"}
		}
	}
	return nil
}

// checkKey refuses a key (or type) the way every log does (log.CheckKey):
// invalid UTF-8, over MaxKeyLength characters, a NUL character.
func checkKey(i int, field, v string) error {
	switch c := log.CheckKey(v); c.Fault {
	case log.KeyUTF8:
		return invalidUTF8(i, field, c.Offset)
	case log.KeyTooLong:
		if field == "key" {
			return &KeyTooLongError{Index: i, Length: c.Length, Limit: MaxKeyLength}
		}
		return &InvalidMessageError{Index: i, Field: field, Reason: fmt.Sprintf("is %d characters long, the limit is %d", c.Length, MaxKeyLength)}
	case log.KeyNUL:
		return &InvalidMessageError{Index: i, Field: field, Reason: "contains a NUL character"}
	}
	return nil
}

// checkText refuses invalid UTF-8 and NUL characters (which no engine's
// text column stores faithfully).
func checkText(i int, field, s string) error {
	if off, bad := log.InvalidUTF8String(s); bad {
		return invalidUTF8(i, field, off)
	}
	if strings.IndexByte(s, 0) >= 0 {
		return &InvalidMessageError{Index: i, Field: field, Reason: "contains a NUL character"}
	}
	return nil
}

func invalidUTF8(i int, field string, offset int) error {
	return &InvalidUTF8Error{Record: "message", Index: i, Field: field, Offset: offset, Refusal: ErrInvalidMessage}
}

// publish inserts rows on q: positions the strategy reserves are taken
// first (one reservation for the batch) and stamped on the rows; otherwise
// the insert draws and returns each.
func (t *Topic) publish(ctx context.Context, q engine.Querier, rows []row) ([]int64, error) {
	if len(rows) == 0 {
		return nil, nil
	}
	reserved, err := t.positions.Reserve(ctx, q, len(rows), position.Reservation{}, nil)
	if err != nil {
		return nil, fmt.Errorf("publishing to %s: %w", t.name, err)
	}
	pos := make([]int64, len(rows))
	if !reserved.Held() {
		// The capture table's position object is the shared name (posTable).
		if t.e.Has(dialect.PositionBeginXID) {
			if _, err := stmt.ExecPositionBeginXID(ctx, t.e, q); err != nil {
				return nil, fmt.Errorf("publishing to %s: %w", t.name, err)
			}
		}
		for i, r := range rows {
			drawn, err := stmt.QueryRowTopicInsertDrawn(ctx, t.e, q, r)
			if err != nil {
				return nil, fmt.Errorf("publishing to %s: %w", t.name, err)
			}
			pos[i] = drawn.GlobalPosition
		}
		return pos, nil
	}
	for i, r := range rows {
		pos[i] = reserved.Position(i)
		if _, err := stmt.ExecTopicInsert(ctx, t.e, q, stmt.TopicInsertParams{GlobalPosition: pos[i], ID: r.ID,
			PartitionKey: r.PartitionKey, EventType: r.EventType, EventRevision: r.EventRevision, Payload: r.Payload,
			Metadata: r.Metadata, OccurredAt: r.OccurredAt, MessageKey: r.MessageKey}); err != nil {
			return nil, fmt.Errorf("publishing to %s: %w", t.name, err)
		}
	}
	return pos, nil
}
