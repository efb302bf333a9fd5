package consumer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/tidemarkdb/tidemark/core/topic"
)

// CaptureSource is the capture topic (EVENT_CAPTURE_RECORDS) as a Source:
// its checkpoints are recorded under the topic's name, its messages carry a
// topic.Record as Value and the message key as Key.
//
// Unlike the event store the topic has retention: a partition whose read
// position lies below the topic's start (history deleted underneath) reads
// as an error that IsMissingHistory recognises, never as a page with a
// hole.
type CaptureSource struct {
	Topic *topic.Topic
	// Waker, when set, wakes readers as soon as the topic's mark moves: the
	// topic's local *hwm.Advancer (Topic.Advancer), or a
	// *pgwake.Waker listening for the topic's name across processes.
	// Without one, readers poll.
	Waker topic.Waker
}

// Name is the topic's name (topic.CaptureTopic), the source_name of its
// checkpoints.
func (s CaptureSource) Name() string { return s.Topic.Name() }

// OnePositionSpace is true: the topic's partitions share its positions.
func (s CaptureSource) OnePositionSpace() bool { return true }

// Partitions is the engine's partition count: the topic stamps a message's
// partition from its key among the engine's partitions at publish.
func (s CaptureSource) Partitions() int { return s.Topic.Partitions() }

// Mark reads the topic's own high-water mark.
func (s CaptureSource) Mark(ctx context.Context) (int64, error) { return s.Topic.Mark(ctx) }

// Read reads one partition in (after, upto]. A read after a position below
// the topic's start returns a *topic.MissingHistoryError (see
// IsMissingHistory).
//
// A message without a key has Key "": keyless messages of a partition are
// applied one at a time in position order, like the messages of one key.
func (s CaptureSource) Read(ctx context.Context, partition int, after, upto int64, limit int) ([]Message, error) {
	recs, err := s.Topic.ReadPartitionUpTo(ctx, partition, after, upto, limit)
	if err != nil {
		return nil, err
	}
	out := make([]Message, 0, len(recs))
	for _, r := range recs {
		out = append(out, Message{Source: s.Name(), Partition: partition, Position: r.Position, Key: r.Key, Value: r})
	}
	return out, nil
}

// ReadMarked is Read with the mark the page was read below, from one
// read-only transaction (MarkedReader): a runner over replicas never
// advances past a mark read on another server.
func (s CaptureSource) ReadMarked(ctx context.Context, partition int, after, upto int64, limit int) ([]Message, int64, error) {
	recs, mark, err := s.Topic.ReadPage(ctx, partition, after, limit)
	if err != nil {
		return nil, 0, err
	}
	out := make([]Message, 0, len(recs))
	for _, r := range recs {
		if r.Position > upto {
			break
		}
		out = append(out, Message{Source: s.Name(), Partition: partition, Position: r.Position, Key: r.Key, Value: r})
	}
	return out, min(mark, upto), nil
}

// Changed is the waker's channel, nil without one.
func (s CaptureSource) Changed() <-chan struct{} {
	if s.Waker == nil {
		return nil
	}
	return s.Waker.Changed()
}

// Copy is the record as the topic stored it, in JSON (see recordCopy).
func (s CaptureSource) Copy(m Message) (string, error) {
	r, ok := m.Value.(topic.Record)
	if !ok {
		return "", fmt.Errorf("consumer: capture topic message at %d holds %T, not topic.Record", m.Position, m.Value)
	}
	c := recordCopy{ID: r.ID, Type: r.Type, Revision: r.Revision, Payload: string(r.Payload),
		OccurredAt: r.OccurredAt.UTC(), Key: r.Key}
	if r.Metadata != nil {
		md := string(r.Metadata)
		c.Metadata = &md
	}
	b, err := json.Marshal(c)
	return string(b), err
}

// Restore decodes a copy made by Copy; partition, position and key come
// from the undelivered row.
func (s CaptureSource) Restore(partition int, position int64, key, copy string) (Message, error) {
	var c recordCopy
	if err := json.Unmarshal([]byte(copy), &c); err != nil {
		return Message{}, fmt.Errorf("consumer: message copy of %s/%d position %d: %w", s.Name(), partition, position, err)
	}
	r := topic.Record{ID: c.ID, Position: position, Partition: partition, Type: c.Type, Revision: c.Revision,
		Payload: []byte(c.Payload), OccurredAt: c.OccurredAt.UTC(), Key: key}
	if c.Metadata != nil {
		r.Metadata = []byte(*c.Metadata)
	}
	return Message{Source: s.Name(), Partition: partition, Position: position, Key: key, Value: r}, nil
}

// recordCopy is CONSUMER_UNDELIVERED_MESSAGES.message_copy of a capture
// record. Payload and metadata are JSON strings holding the stored text,
// not embedded documents: encoding/json compacts an embedded
// json.RawMessage, and the copy must give back the stored bytes exactly
// (the publish refused anything but valid UTF-8, which a JSON string keeps
// byte for byte). Metadata is a pointer so NULL and "" stay apart.
type recordCopy struct {
	ID         string    `json:"id"`
	Type       string    `json:"type"`
	Revision   int       `json:"revision"`
	Payload    string    `json:"payload"`
	Metadata   *string   `json:"metadata"`
	OccurredAt time.Time `json:"occurred_at"`
	Key        string    `json:"key,omitempty"`
}

// IsMissingHistory reports whether err is a read below a topic's start
// (*topic.MissingHistoryError anywhere in its chain) and, if so, the
// position history resumes after: the topic's start, every message at or
// below which was deleted. The runner records it as the incomplete-history
// mark (CONSUMER_CHECKPOINTS.incomplete_through) and halts the consumer
// with MISSING_HISTORY.
func IsMissingHistory(err error) (resumesAfter int64, ok bool) {
	var mh *topic.MissingHistoryError
	if errors.As(err, &mh) {
		return mh.TopicStart, true
	}
	return 0, false
}
