package consumer

import (
	"encoding/json"

	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/eventstore"
	"github.com/tidemarkdb/tidemark/core/log"
)

// EventStore is the event store as a Source (engine.EventStoreTopic): its
// messages hold an eventstore.Recorded, keyed "aggregate type/aggregate
// id"; an operator is shown its payload. waker, when set (a local *hwm.Advancer, a *pgwake.Waker), wakes
// readers as soon as the mark moves; nil: they poll.
func EventStore(store *eventstore.Store, waker log.Waker) *LogSource[eventstore.Recorded] {
	return NewLogSource(LogSpec[eventstore.Recorded]{
		Name:       engine.EventStoreTopic,
		Partitions: store.Engine().Partitions,
		Log:        store.Log(),
		Mark:       store.Mark,
		Waker:      waker,
		Partition:  func(ev eventstore.Recorded) int { return ev.PartitionKey },
		Key:        func(ev eventstore.Recorded) string { return ev.AggregateType + "/" + ev.AggregateID },
		Copy:       copyOfEvent,
		Restore:    eventFromCopy,
		Payload:    func(ev eventstore.Recorded) []byte { return ev.Payload },
		RangeReads: true,
	})
}

// copyOfEvent is the message copy of an event: the event as stored, in
// JSON, so a retry applies what the store holds (an upcaster deployed
// since applies).
func copyOfEvent(ev eventstore.Recorded) (string, error) {
	b, err := json.Marshal(ev)
	return string(b), err
}

// eventFromCopy decodes an event copy; the event carries its own
// partition, position and key.
func eventFromCopy(_ int, _ int64, _, copy string) (eventstore.Recorded, error) {
	var ev eventstore.Recorded
	err := json.Unmarshal([]byte(copy), &ev)
	return ev, err
}
