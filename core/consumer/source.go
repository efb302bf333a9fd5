package consumer

import (
	"context"

	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/eventstore"
)

// Message is one record of a source, as a handler gets it.
type Message struct {
	Source    string
	Partition int
	Position  int64
	// Key orders messages: messages of one key are applied one at a time in
	// position order; different keys of a partition are applied
	// concurrently. For the event store it is "aggregate type/aggregate id".
	Key string
	// Value is the source's record: an eventstore.Recorded for the event
	// store.
	Value any
	// Generation is the generation of the partition lease this instance
	// applies the message under (Options.Leases), the fencing token of a
	// handler's side effects outside the database: a receiver that has seen
	// a higher generation of the partition refuses lower ones. 0 without
	// leases.
	Generation int64
}

// Source is a partitioned, position-ordered topic a consumer reads: the
// event store (EventStoreSource), the capture topic. Positions are
// positive and only ever readable up to the source's mark.
type Source interface {
	// Name is the topic's identity, the source_name of its checkpoints.
	Name() string
	// Partitions is the fixed partition count.
	Partitions() int
	// Mark is the position up to which every message is committed or
	// abandoned (the high-water mark).
	Mark(ctx context.Context) (int64, error)
	// Read returns up to limit messages of partition with positions in
	// (after, upto], in position order; upto is at most the mark.
	Read(ctx context.Context, partition int, after, upto int64, limit int) ([]Message, error)
	// Changed returns a channel closed when the mark next moves, or nil
	// when only polling can tell (a mark moved by another process).
	Changed() <-chan struct{}
	// Copy encodes m's record as CONSUMER_UNDELIVERED_MESSAGES.message_copy
	// keeps it (the record as the topic stored it), so a retry need not
	// find it in the topic and retention need not wait for it.
	Copy(m Message) (string, error)
	// Restore decodes a copy made by Copy back into the message; partition,
	// position and key come from the undelivered row.
	Restore(partition int, position int64, key, copy string) (Message, error)
	// OnePositionSpace tells whether the partitions share one sequence of
	// positions (a log's global positions): a skip of a position then
	// holds in every partition, and a source that wraps another keeps its
	// answer by embedding it.
	OnePositionSpace() bool
}

// MarkedReader is a Source whose reads also return the mark they were read
// below, in one transaction with the page (EventStoreSource): the runner
// then advances past a short page to that mark, never further.
type MarkedReader interface {
	ReadMarked(ctx context.Context, partition int, after, upto int64, limit int) ([]Message, int64, error)
}

// RangeReader is a Source whose positions are one sequence across its
// partitions and that reads every partition in one statement: the
// messages of all partitions in (after, upto], in position order, up to
// limit, with the mark they were read below (as MarkedReader). The runner
// reads through it when it holds every partition and they are close, one
// round trip instead of one per partition.
type RangeReader interface {
	ReadRangeMarked(ctx context.Context, after, upto int64, limit int) ([]Message, int64, error)
}

// EventStoreSource is the event store as a Source.
type EventStoreSource struct {
	Store *eventstore.Store
	// Waker, when set (a local *hwm.Advancer), wakes readers as soon as the
	// mark moves; without one they poll.
	Waker eventstore.Waker
}

// Name is the event store's topic, engine.EventStoreTopic.
func (s EventStoreSource) Name() string { return engine.EventStoreTopic }

// OnePositionSpace is true: the event store's partitions share its global
// positions, so a skip there holds in every partition.
func (s EventStoreSource) OnePositionSpace() bool { return true }

// Partitions is the engine's partition count.
func (s EventStoreSource) Partitions() int { return s.Store.Engine().Partitions }

// Mark reads the event store's high-water mark.
func (s EventStoreSource) Mark(ctx context.Context) (int64, error) { return s.Store.Mark(ctx) }

// Read reads one partition after after. ReadPartition stops at the mark it
// reads itself, which is at or above upto; events past upto are dropped so
// a page never reaches beyond what the caller asked for.
func (s EventStoreSource) Read(ctx context.Context, partition int, after, upto int64, limit int) ([]Message, error) {
	evs, err := s.Store.ReadPartition(ctx, partition, after, limit)
	if err != nil {
		return nil, err
	}
	return s.messages(evs, upto), nil
}

// ReadMarked is Read that also returns the mark the page was read below
// (Store.ReadPage: one read-only transaction): the runner advances past a
// short page only to that mark, so a pool spread over replicas, where the
// mark read for the poll may come from a server further ahead, never
// skips.
func (s EventStoreSource) ReadMarked(ctx context.Context, partition int, after, upto int64, limit int) ([]Message, int64, error) {
	evs, mark, err := s.Store.ReadPage(ctx, partition, after, limit)
	if err != nil {
		return nil, 0, err
	}
	return s.messages(evs, upto), min(mark, upto), nil
}

// ReadRangeMarked reads every partition (Store.ReadPage of partition -1:
// the mark and the page in one read-only transaction).
func (s EventStoreSource) ReadRangeMarked(ctx context.Context, after, upto int64, limit int) ([]Message, int64, error) {
	evs, mark, err := s.Store.ReadPage(ctx, -1, after, limit)
	if err != nil {
		return nil, 0, err
	}
	return s.messages(evs, upto), min(mark, upto), nil
}

// messages are evs up to upto as messages of the event store, in
// position order (a page never reaches beyond what the caller asked for).
func (s EventStoreSource) messages(evs []eventstore.Recorded, upto int64) []Message {
	out := make([]Message, 0, len(evs))
	for _, ev := range evs {
		if ev.GlobalPosition > upto {
			break
		}
		out = append(out, Message{Source: s.Name(), Partition: ev.PartitionKey, Position: ev.GlobalPosition,
			Key: ev.AggregateType + "/" + ev.AggregateID, Value: ev})
	}
	return out
}

// Changed is the waker's channel, nil without one.
func (s EventStoreSource) Changed() <-chan struct{} {
	if s.Waker == nil {
		return nil
	}
	return s.Waker.Changed()
}

// Copy is the event as stored, in JSON.
func (s EventStoreSource) Copy(m Message) (string, error) { return copyOfEvent(m) }

// Restore decodes an event copy.
func (s EventStoreSource) Restore(partition int, position int64, key, copy string) (Message, error) {
	return eventFromCopy(s.Name(), partition, position, key, copy)
}
