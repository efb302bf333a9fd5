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

// row is one message's binds, in the slots of dialect.CaptureInsertBinds.
type row [nBinds]any

// The slot of each of dialect.CaptureInsertBinds in a row.
const (
	bID = iota
	bGlobalPosition
	bPartitionKey
	bEventType
	bEventRevision
	bPayload
	bMetadata
	bOccurredAt
	bMessageKey
	nBinds
)

// check refuses bad input before any SQL and builds each row's binds.
func (t *Topic) check(msgs []Message) ([]row, error) {
	now := time.Now()
	rows := make([]row, 0, len(msgs))
	for i, m := range msgs {
		if err := checkMessage(i, m); err != nil {
			return nil, err
		}
		if err := fitsColumns(t.e.Cat.Facts, i, m.Key, m.Type); err != nil {
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
		var key, meta any
		if m.Key != "" {
			key = m.Key
		}
		if m.Metadata != nil {
			meta = string(m.Metadata)
		}
		var r row
		r[bID], r[bPartitionKey], r[bEventType], r[bEventRevision] = id, PartitionKey(m.Key, t.e.Partitions), m.Type, m.Revision
		r[bPayload], r[bMetadata], r[bOccurredAt], r[bMessageKey] = string(m.Payload), meta, t.e.Cat.Facts.CutEventTime(at), key
		rows = append(rows, r)
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
	return checkDocuments(i, m.Payload, m.Metadata)
}

// checkDocuments refuses a payload (required) or metadata (nil for none)
// that is not a JSON document a text column stores faithfully.
func checkDocuments(i int, payload, metadata []byte) error {
	for _, f := range []struct {
		name string
		b    []byte
		opt  bool
	}{{"payload", payload, false}, {"metadata", metadata, true}} {
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

// fitsColumns refuses a key or type of at most MaxKeyLength characters that
// the engine's VARCHAR(255) cannot hold in the unit it counts
// (EngineFacts.TextUnit). A string of at most 255 bytes costs a comparison.
func fitsColumns(f dialect.EngineFacts, i int, key, typ string) error {
	if n, ok := f.TextFits(key, MaxKeyLength); !ok {
		return &KeyTooLongError{Index: i, Length: n, Limit: MaxKeyLength, Unit: f.TextUnit.Name()}
	}
	if n, ok := f.TextFits(typ, MaxKeyLength); !ok {
		return &InvalidMessageError{Index: i, Field: "type", Reason: fmt.Sprintf("is %d %s long, the column holds %d", n, f.TextUnit.Name(), MaxKeyLength)}
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

// publish inserts rows on q through the capture insert, as few statements
// as its MaxRows allows: positions the strategy reserves are taken first
// (one reservation for the batch) and stamped on the rows; otherwise the
// insert draws and returns them, in insert order.
func (t *Topic) publish(ctx context.Context, q engine.Querier, rows []row) ([]int64, error) {
	if len(rows) == 0 {
		return nil, nil
	}
	pos, err := t.insert(ctx, q, rows)
	if err != nil {
		return nil, fmt.Errorf("publishing to %s: %w", t.name, err)
	}
	return pos, nil
}

func (t *Topic) insert(ctx context.Context, q engine.Querier, rows []row) ([]int64, error) {
	vals := make([][]any, len(rows))
	for i := range rows {
		vals[i] = rows[i][:]
	}
	return t.ins.run(ctx, q, vals)
}
