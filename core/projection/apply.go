package projection

import (
	"context"
	"database/sql"
	"errors"

	"github.com/tidemarkdb/tidemark/core/consumer"
	"github.com/tidemarkdb/tidemark/core/eventstore"
)

// ConsumerType is CONSUMERS.consumer_type of every projection.
const ConsumerType = "projection"

// Handler applies one event in the consumer's transaction: load the read
// model (or init a new one), run the event type's listener, publish the
// state on the read-model topic (a tombstone when the listener returned
// Delete) and point the query-table row at it. Events no listener is
// declared for are passed over. The runner must be Transactional (Options).
func (s *Store[S]) Handler() consumer.Handler[eventstore.Recorded] {
	return func(ctx context.Context, tx *sql.Tx, m consumer.Msg[eventstore.Recorded]) error {
		if tx == nil {
			return errNotTransactional
		}
		return s.apply(ctx, tx, m.Value)
	}
}

var errNotTransactional = errors.New("projection: the consumer must be Transactional (use Store.Options)")

func (s *Store[S]) apply(ctx context.Context, tx *sql.Tx, rec eventstore.Recorded) error {
	l, ok := s.p.listeners[rec.Type]
	if !ok {
		return nil
	}
	key := s.p.key(rec)
	cur, err := s.load(ctx, tx, key)
	if err != nil {
		return err
	}
	state := cur.state
	err = l(rec, s.p.codec, &state)
	deleted := errors.Is(err, Delete)
	if err != nil && !deleted {
		return err
	}
	if deleted && cur.messageID == "" {
		return nil // nothing stored to delete
	}
	payload, err := s.p.codec.Marshal(state)
	if err != nil {
		return err
	}
	id, err := s.log.publish(ctx, tx, stateMessage{Key: key, Type: s.p.typeName, Payload: payload,
		Metadata: rec.Metadata, CascadeDepth: 1, Deleted: deleted})
	if err != nil {
		return err
	}
	if deleted {
		return s.remove(ctx, tx, key, cur)
	}
	return s.save(ctx, tx, key, cur, &state, id, 0)
}

// Options are the consumer options that run the projection over src (the
// event store, consumer.EventStore): its name, Transactional, and one
// worker for a Global projection (every event updates one read model).
// Leases, retries, error policy and metrics are the caller's to add.
func (s *Store[S]) Options(src consumer.SourceOf[eventstore.Recorded]) consumer.Options {
	o := consumer.Options{Type: ConsumerType, Name: s.p.name, Transactional: true,
		Routes: []consumer.Route{consumer.On(src, s.Handler())}}
	if s.p.scope == Global {
		o.Workers = 1
	}
	return o
}
