package consumer

import "context"

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
	// store, a topic.Record for the capture topic. A handler gets it typed
	// (Msg).
	Value any
	// Generation is the generation of the partition lease this instance
	// applies the message under (Options.Leases), the fencing token of a
	// handler's side effects outside the database: a receiver that has seen
	// a higher generation of the partition refuses lower ones. 0 without
	// leases.
	Generation int64
	// Epoch is the consumer's epoch the runner applies the message under
	// (0 before its first rebuild): a handler whose writes depend on a
	// rebuild's phase (a projection's shadow) tells the phases apart by it.
	Epoch int64
}

// Source is a partitioned, position-ordered topic a consumer reads: a log
// (LogSource: EventStore, Capture). Positions are positive and only ever
// readable up to the source's mark.
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
	// Payload is m's record as an operator is shown it (the console).
	Payload(m Message) ([]byte, error)
	// OnePositionSpace tells whether the partitions share one sequence of
	// positions (a log's global positions): a skip of a position then
	// holds in every partition, and a source that wraps another keeps its
	// answer by embedding it.
	OnePositionSpace() bool
}

// MarkedReader is a Source whose reads also return the mark they were read
// below, in one transaction with the page (LogSource): the runner
// then advances past a short page to that mark, never further.
type MarkedReader interface {
	ReadMarked(ctx context.Context, partition int, after, upto int64, limit int) ([]Message, int64, error)
}

// RangeReader is a Source whose positions are one sequence across its
// partitions and that reads every partition in one statement: the
// messages of all partitions in (after, upto], in position order, up to
// limit, with the mark they were read below (as MarkedReader). The runner
// reads through it when it holds every partition and they are close, one
// round trip instead of one per partition. A RangeReader that also has a
// RangeReads method reporting false is read per partition all the same
// (LogSource: Capture).
type RangeReader interface {
	ReadRangeMarked(ctx context.Context, after, upto int64, limit int) ([]Message, int64, error)
}
