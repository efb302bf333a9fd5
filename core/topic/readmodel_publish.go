package topic

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
)

// The slot of each of dialect.ReadModelInsertBinds in a row.
const (
	rmID = iota
	rmTopic
	rmTopicPosition
	rmPartitionKey
	rmKey
	rmType
	rmPayload
	rmMetadata
	rmCascadeDepth
	rmDeleted
	rmOccurredAt
	rmBinds
)

// PublishTx publishes msgs on the topic inside the caller's transaction
// (the projection's apply), so they commit or roll back with the caller's
// writes, and returns each message's new id and position, in order. tx
// must come from the engine's *sql.DB; on error the caller must roll back.
// Bad input is refused before any SQL (ErrInvalidMessage). On a counter
// engine the topic's counter row stays locked until tx ends, so the
// topic's publishes are serialized; where one sequence numbers every topic
// they never wait for each other, and the messages are readable once the
// shared mark passes them (ReadModelAdvancer).
func (t *ReadModelTopic) PublishTx(ctx context.Context, tx *sql.Tx, msgs ...ReadModelMessage) ([]Published, error) {
	rows, out, err := t.check(msgs)
	if err != nil || len(rows) == 0 {
		return nil, err
	}
	pos, err := t.ins.run(ctx, tx, rows)
	if err != nil {
		return nil, fmt.Errorf("publishing to read-model topic %s: %w", t.name, err)
	}
	for i := range out {
		out[i].Position = pos[i]
	}
	return out, nil
}

// check refuses bad input before any SQL and builds each row's binds and
// the new ids.
func (t *ReadModelTopic) check(msgs []ReadModelMessage) ([][]any, []Published, error) {
	now := time.Now()
	rows := make([][]any, 0, len(msgs))
	out := make([]Published, 0, len(msgs))
	for i, m := range msgs {
		if err := t.checkMessage(i, m); err != nil {
			return nil, nil, err
		}
		u, err := uuid.NewV7()
		if err != nil {
			return nil, nil, err
		}
		at := m.OccurredAt
		if at.IsZero() {
			at = now
		}
		var meta any
		if m.Metadata != nil {
			meta = string(m.Metadata)
		}
		r := make([]any, rmBinds)
		r[rmID], r[rmTopic], r[rmPartitionKey], r[rmKey], r[rmType] = u.String(), t.name, PartitionKey(m.Key, t.e.Partitions), m.Key, m.Type
		r[rmPayload], r[rmMetadata], r[rmCascadeDepth], r[rmDeleted] = string(m.Payload), meta, m.CascadeDepth, m.Deleted
		r[rmOccurredAt] = t.e.Cat.Facts.CutEventTime(at)
		rows = append(rows, r)
		out = append(out, Published{ID: u.String()})
	}
	return rows, out, nil
}

func (t *ReadModelTopic) checkMessage(i int, m ReadModelMessage) error {
	if m.Key == "" {
		return &InvalidMessageError{Index: i, Field: "key", Reason: "is empty"}
	}
	if err := checkKey(i, "key", m.Key); err != nil {
		return err
	}
	if t.e.Cat.KeysIgnoreTrailingSpaces && strings.HasSuffix(m.Key, " ") {
		return &InvalidMessageError{Index: i, Field: "key", Reason: "ends in a space, which this engine ignores in comparisons"}
	}
	if m.Type == "" {
		return &InvalidMessageError{Index: i, Field: "type", Reason: "is empty"}
	}
	if err := checkKey(i, "type", m.Type); err != nil {
		return err
	}
	if err := fitsColumns(t.e.Cat.Facts, i, m.Key, m.Type); err != nil {
		return err
	}
	if m.CascadeDepth < 1 {
		return &InvalidMessageError{Index: i, Field: "cascade depth", Reason: fmt.Sprintf("is %d, the least is 1", m.CascadeDepth)}
	}
	return checkDocuments(i, m.Payload, m.Metadata)
}
