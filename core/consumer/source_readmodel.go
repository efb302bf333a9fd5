package consumer

import (
	"encoding/json"
	"time"

	"github.com/tidemarkdb/tidemark/core/log"
	"github.com/tidemarkdb/tidemark/core/topic"
)

// ReadModelTopic is a read-model topic (a projection's messages in
// READ_MODEL_CAPTURE_RECORDS) as a Source: its checkpoints are recorded
// under the topic's source name (topic.ReadModelSourcePrefix + its name),
// its messages hold a topic.ReadModelRecord and the read model's key as Key,
// so a key's messages are applied in position order. waker, when set, wakes
// readers as soon as the shared mark moves (topic.ReadModelAdvancer, or a
// *pgwake.Waker listening for topic.ReadModelMarkTopic); nil: readers poll
// (on a counter engine nothing advances a mark: a publish is readable at
// its commit, and readers poll). It is read one partition at a time.
func ReadModelTopic(t *topic.ReadModelTopic, waker log.Waker) *LogSource[topic.ReadModelRecord] {
	return NewLogSource(LogSpec[topic.ReadModelRecord]{
		Name:       t.SourceName(),
		Partitions: t.Partitions(),
		Log:        t.Log(),
		Mark:       t.Mark,
		Waker:      waker,
		Partition:  func(r topic.ReadModelRecord) int { return r.Partition },
		Key:        func(r topic.ReadModelRecord) string { return r.Key },
		Copy:       copyOfReadModel,
		Restore:    readModelFromCopy(t.Name()),
	})
}

// readModelCopy is CONSUMER_UNDELIVERED_MESSAGES.message_copy of a
// read-model message; payload and metadata are JSON strings holding the
// stored text, as in recordCopy.
type readModelCopy struct {
	ID           string    `json:"id"`
	Type         string    `json:"type"`
	Revision     int       `json:"revision"`
	Payload      string    `json:"payload"`
	Metadata     *string   `json:"metadata"`
	CascadeDepth int       `json:"cascade_depth"`
	Deleted      bool      `json:"deleted"`
	OccurredAt   time.Time `json:"occurred_at"`
}

func copyOfReadModel(r topic.ReadModelRecord) (string, error) {
	c := readModelCopy{ID: r.ID, Type: r.Type, Revision: r.Revision, Payload: string(r.Payload),
		CascadeDepth: r.CascadeDepth, Deleted: r.Deleted, OccurredAt: r.OccurredAt.UTC()}
	if r.Metadata != nil {
		md := string(r.Metadata)
		c.Metadata = &md
	}
	b, err := json.Marshal(c)
	return string(b), err
}

// readModelFromCopy decodes a copy made by copyOfReadModel; partition,
// position and key come from the undelivered row, the topic from the source.
func readModelFromCopy(name string) func(partition int, position int64, key, copy string) (topic.ReadModelRecord, error) {
	return func(partition int, position int64, key, copy string) (topic.ReadModelRecord, error) {
		var c readModelCopy
		if err := json.Unmarshal([]byte(copy), &c); err != nil {
			return topic.ReadModelRecord{}, err
		}
		r := topic.ReadModelRecord{ID: c.ID, Topic: name, Position: position, Partition: partition, Key: key, Type: c.Type,
			Revision: c.Revision, Payload: []byte(c.Payload), CascadeDepth: c.CascadeDepth, Deleted: c.Deleted, OccurredAt: c.OccurredAt.UTC()}
		if c.Metadata != nil {
			r.Metadata = []byte(*c.Metadata)
		}
		return r, nil
	}
}
