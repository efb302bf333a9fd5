package consumer

import (
	"context"
	"fmt"

	"github.com/tidemarkdb/tidemark/core/log"
)

// LogSpec is what a consumer needs of a log besides its page read: the
// event store's (EventStore) and the capture topic's (Capture) are built in.
type LogSpec[T any] struct {
	// Name is the log's topic, the source_name of its checkpoints.
	Name string
	// Partitions is the log's fixed partition count.
	Partitions int
	// Log is the log's page read (the mark and the page in one read
	// transaction).
	Log log.Source[T]
	// Mark reads the log's high-water mark.
	Mark func(ctx context.Context) (int64, error)
	// Waker, when set, wakes readers as soon as the mark moves; without
	// one they poll.
	Waker log.Waker
	// Partition is a record's partition.
	Partition func(T) int
	// Key is a record's message key (Message.Key).
	Key func(T) string
	// Copy encodes a record as CONSUMER_UNDELIVERED_MESSAGES.message_copy
	// keeps it; Restore decodes it, with the partition, position and key
	// of the undelivered row.
	Copy    func(T) (string, error)
	Restore func(partition int, position int64, key, copy string) (T, error)
	// Payload is a record as an operator is shown it; nil: its copy.
	Payload func(T) []byte
	// RangeReads tells whether the runner may read every partition in one
	// statement (RangeReader).
	RangeReads bool
}

// LogSource is a log as a consumer's Source whose messages hold records
// of type T (SourceOf[T]): a handler registered for it with On gets them
// typed.
type LogSource[T any] struct{ spec LogSpec[T] }

// NewLogSource returns the log described by spec as a Source.
func NewLogSource[T any](spec LogSpec[T]) *LogSource[T] { return &LogSource[T]{spec: spec} }

// Name is the log's topic.
func (s *LogSource[T]) Name() string { return s.spec.Name }

// Partitions is the log's partition count.
func (s *LogSource[T]) Partitions() int { return s.spec.Partitions }

// OnePositionSpace is true: a log's partitions share its positions, so a
// skip there holds in every partition.
func (s *LogSource[T]) OnePositionSpace() bool { return true }

// Mark reads the log's high-water mark.
func (s *LogSource[T]) Mark(ctx context.Context) (int64, error) { return s.spec.Mark(ctx) }

// Read reads one partition in (after, upto]: ReadMarked without its mark.
func (s *LogSource[T]) Read(ctx context.Context, partition int, after, upto int64, limit int) ([]Message, error) {
	msgs, _, err := s.ReadMarked(ctx, partition, after, upto, limit)
	return msgs, err
}

// ReadMarked is Read that also returns the mark the page was read below
// (one read-only transaction): the runner advances past a short page only
// to that mark, so a pool spread over replicas, where the mark read for
// the poll may come from a server further ahead, never skips. The page
// stops at the mark it reads itself; records past upto are dropped so a
// page never reaches beyond what the caller asked for.
func (s *LogSource[T]) ReadMarked(ctx context.Context, partition int, after, upto int64, limit int) ([]Message, int64, error) {
	if partition < 0 || partition >= s.spec.Partitions {
		return nil, 0, fmt.Errorf("partition %d is out of range 0..%d", partition, s.spec.Partitions-1)
	}
	return s.page(ctx, partition, after, upto, limit)
}

// ReadRangeMarked reads every partition (the page read of partition -1:
// the mark and the page in one read-only transaction).
func (s *LogSource[T]) ReadRangeMarked(ctx context.Context, after, upto int64, limit int) ([]Message, int64, error) {
	return s.page(ctx, -1, after, upto, limit)
}

// RangeReads tells the runner whether to read through ReadRangeMarked.
func (s *LogSource[T]) RangeReads() bool { return s.spec.RangeReads }

func (s *LogSource[T]) page(ctx context.Context, partition int, after, upto int64, limit int) ([]Message, int64, error) {
	recs, mark, err := s.spec.Log.Page(ctx, partition, after, limit)
	if err != nil {
		return nil, 0, err
	}
	out := make([]Message, 0, len(recs))
	for _, rec := range recs {
		if s.spec.Log.Position(rec) > upto {
			break
		}
		out = append(out, s.message(rec))
	}
	return out, min(mark, upto), nil
}

// message is rec as a message of this log.
func (s *LogSource[T]) message(rec T) Message {
	return Message{Source: s.spec.Name, Partition: s.spec.Partition(rec), Position: s.spec.Log.Position(rec),
		Key: s.spec.Key(rec), Value: rec}
}

// Changed is the waker's channel, nil without one.
func (s *LogSource[T]) Changed() <-chan struct{} {
	if s.spec.Waker == nil {
		return nil
	}
	return s.spec.Waker.Changed()
}

// Record is m's record.
func (s *LogSource[T]) Record(m Message) (T, error) {
	rec, ok := m.Value.(T)
	if !ok {
		var want T
		return want, fmt.Errorf("consumer: %s message at %d holds %T, not %T", s.spec.Name, m.Position, m.Value, want)
	}
	return rec, nil
}

// Copy encodes m's record as the log's message copy.
func (s *LogSource[T]) Copy(m Message) (string, error) {
	rec, err := s.Record(m)
	if err != nil {
		return "", err
	}
	return s.spec.Copy(rec)
}

// Payload is m's record as an operator is shown it: the spec's Payload,
// else its copy.
func (s *LogSource[T]) Payload(m Message) ([]byte, error) {
	rec, err := s.Record(m)
	if err != nil {
		return nil, err
	}
	if s.spec.Payload != nil {
		return s.spec.Payload(rec), nil
	}
	c, err := s.spec.Copy(rec)
	return []byte(c), err
}

// Restore decodes a copy made by Copy back into the message; partition,
// position and key come from the undelivered row.
func (s *LogSource[T]) Restore(partition int, position int64, key, copy string) (Message, error) {
	rec, err := s.spec.Restore(partition, position, key, copy)
	if err != nil {
		return Message{}, fmt.Errorf("consumer: message copy of %s/%d position %d: %w", s.spec.Name, partition, position, err)
	}
	return Message{Source: s.spec.Name, Partition: partition, Position: position, Key: key, Value: rec}, nil
}
