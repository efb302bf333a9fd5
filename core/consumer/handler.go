package consumer

import (
	"context"
	"database/sql"
)

// Msg is a message of a source whose records are T, as its handler gets
// it (Message with its record typed).
type Msg[T any] struct {
	Source    string
	Partition int
	Position  int64
	// Key orders messages: messages of one key are applied one at a time in
	// position order; different keys of a partition are applied
	// concurrently. For the event store it is "aggregate type/aggregate id".
	Key string
	// Value is the source's record.
	Value T
	// Generation is the partition lease's generation the message is
	// applied under (Message.Generation); 0 without leases.
	Generation int64
	// Epoch is the consumer's epoch the message is applied under
	// (Message.Epoch).
	Epoch int64
}

// Handler applies one message of a source whose records are T. tx is the
// apply's own transaction when the runner is Transactional (the checkpoint
// advances in it, so the apply and its checkpoint commit together) and nil
// otherwise. A transient database error returned by the handler retries
// the apply without spending the message's budget; any other error
// records the message FAILED in CONSUMER_UNDELIVERED_MESSAGES, retried
// under Options.Retry, and once its budget is spent Options.OnError
// decides (see docs/consumers.md).
type Handler[T any] func(ctx context.Context, tx *sql.Tx, m Msg[T]) error

// SourceOf is a Source whose messages hold records of type T (LogSource):
// On ties a handler to it, so a handler for another type does not compile.
type SourceOf[T any] interface {
	Source
	// Record is m's record.
	Record(m Message) (T, error)
}

// Route is a source a runner reads with the handler of its messages
// (On); Options.Routes lists them.
type Route struct {
	source Source
	apply  func(ctx context.Context, tx *sql.Tx, m Message) error
	// chunk, set by OnChunk, applies a chunk of a Transactional runner
	// with TxBatch above 1 in one call.
	chunk func(ctx context.Context, tx *sql.Tx, ms []Message) error
}

// On routes the messages of src to h.
func On[T any](src SourceOf[T], h Handler[T]) Route {
	return Route{source: src, apply: func(ctx context.Context, tx *sql.Tx, m Message) error {
		tm, err := msgOf(src, m)
		if err != nil {
			return err
		}
		return h(ctx, tx, tm)
	}}
}

// msgOf is m as a handler of src's records gets it.
func msgOf[T any](src SourceOf[T], m Message) (Msg[T], error) {
	v, err := src.Record(m)
	if err != nil {
		return Msg[T]{}, err
	}
	return Msg[T]{Source: m.Source, Partition: m.Partition, Position: m.Position, Key: m.Key,
		Value: v, Generation: m.Generation, Epoch: m.Epoch}, nil
}

// ChunkHandler applies consecutive messages of one partition, in position
// order, in the transaction tx of a Transactional runner: one message when
// the runner delivers it on its own, up to Options.TxBatch when it applies
// a chunk. It lets a handler read and write what a chunk touches in a few
// statements instead of a few per message. An error rolls the whole chunk
// back; the runner then applies its messages one at a time (a call per
// message), so errors are told per message as a Handler's are. Calls with
// tx nil (a runner that is not Transactional) pass one message.
type ChunkHandler[T any] func(ctx context.Context, tx *sql.Tx, ms []Msg[T]) error

// OnChunk routes the messages of src to h, a chunk at a time where the
// runner applies chunks.
func OnChunk[T any](src SourceOf[T], h ChunkHandler[T]) Route {
	chunk := func(ctx context.Context, tx *sql.Tx, ms []Message) error {
		typed := make([]Msg[T], len(ms))
		for i, m := range ms {
			tm, err := msgOf(src, m)
			if err != nil {
				return err
			}
			typed[i] = tm
		}
		return h(ctx, tx, typed)
	}
	return Route{source: src, chunk: chunk, apply: func(ctx context.Context, tx *sql.Tx, m Message) error {
		return chunk(ctx, tx, []Message{m})
	}}
}

// Source is the route's source.
func (r Route) Source() Source { return r.source }
