package consumer

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/tidemarkdb/tidemark/core/log"
	"github.com/tidemarkdb/tidemark/core/topic"
)

// Capture is the capture topic (EVENT_CAPTURE_RECORDS) as a Source: its
// checkpoints are recorded under the topic's name, its messages hold a
// topic.Record and the message key as Key (a message without a key has
// Key "": keyless messages of a partition are applied one at a time in
// position order, like the messages of one key). waker, when set, wakes
// readers as soon as the topic's mark moves: the topic's local
// *hwm.Advancer (Topic.Advancer), or a *pgwake.Waker listening for the
// topic's name across processes; nil: readers poll.
//
// Unlike the event store the topic has retention: a partition whose read
// position lies below the topic's start (history deleted underneath) reads
// as an error that IsMissingHistory recognises, never as a page with a
// hole. It is read one partition at a time.
func Capture(t *topic.Topic, waker log.Waker) *LogSource[topic.Record] {
	return NewLogSource(LogSpec[topic.Record]{
		Name:       t.Name(),
		Partitions: t.Partitions(),
		Log:        t.Log(),
		Mark:       t.Mark,
		Waker:      waker,
		Partition:  func(r topic.Record) int { return r.Partition },
		Key:        func(r topic.Record) string { return r.Key },
		Copy:       copyOfRecord,
		Restore:    recordFromCopy,
	})
}

// copyOfRecord is the record as the topic stored it, in JSON (see
// recordCopy).
func copyOfRecord(r topic.Record) (string, error) {
	c := recordCopy{ID: r.ID, Type: r.Type, Revision: r.Revision, Payload: string(r.Payload),
		OccurredAt: r.OccurredAt.UTC(), Key: r.Key}
	if r.Metadata != nil {
		md := string(r.Metadata)
		c.Metadata = &md
	}
	b, err := json.Marshal(c)
	return string(b), err
}

// recordFromCopy decodes a copy made by copyOfRecord; partition, position
// and key come from the undelivered row.
func recordFromCopy(partition int, position int64, key, copy string) (topic.Record, error) {
	var c recordCopy
	if err := json.Unmarshal([]byte(copy), &c); err != nil {
		return topic.Record{}, err
	}
	r := topic.Record{ID: c.ID, Position: position, Partition: partition, Type: c.Type, Revision: c.Revision,
		Payload: []byte(c.Payload), OccurredAt: c.OccurredAt.UTC(), Key: key}
	if c.Metadata != nil {
		r.Metadata = []byte(*c.Metadata)
	}
	return r, nil
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
