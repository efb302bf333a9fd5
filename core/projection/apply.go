package projection

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/tidemarkdb/tidemark/core/consumer"
	"github.com/tidemarkdb/tidemark/core/eventstore"
	"github.com/tidemarkdb/tidemark/core/topic"
)

// ConsumerType is CONSUMERS.consumer_type of every projection.
const ConsumerType = "projection"

var errNotTransactional = errors.New("projection: the consumer must be Transactional (use Store.Options)")

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
		rec := m.Value
		key, run, ok := s.p.eventListener(rec)
		if !ok {
			return nil
		}
		return s.apply(ctx, tx, m.Epoch, key, run, rec.Metadata, 1)
	}
}

// eventListener is the run of rec's listener on a read model and the key
// of the read model it updates; ok is false when p declares no listener
// for rec's type (the event is passed over). A Store's apply and a
// Memory's share it.
func (p *Projection[S]) eventListener(rec eventstore.Recorded) (key string, run func(*S) error, ok bool) {
	l, ok := p.listeners[rec.Type]
	if !ok {
		return "", nil, false
	}
	return p.key(rec.AggregateID), func(st *S) error { return l(rec, p.codec, st) }, true
}

// runOn runs a listener on state: deleted when it returned Delete, else
// its error as it returned it.
func runOn[S any](run func(*S) error, state *S) (deleted bool, err error) {
	err = run(state)
	if errors.Is(err, Delete) {
		return true, nil
	}
	return false, err
}

// decodeState is key's read model from its stored state: init's read
// model with payload decoded over it (a field the document lacks keeps
// its init value).
func (p *Projection[S]) decodeState(key string, payload []byte) (S, error) {
	state := p.init(key)
	if err := p.codec.Unmarshal(payload, &state); err != nil {
		return state, fmt.Errorf("projection %q: read model %q does not decode: %w", p.name, key, err)
	}
	return state, nil
}

// ReadModelHandler applies one message of an upstream projection's
// read-model topic (OnReadModel) the same way.
func (s *Store[S]) ReadModelHandler() consumer.Handler[topic.ReadModelRecord] {
	return func(ctx context.Context, tx *sql.Tx, m consumer.Msg[topic.ReadModelRecord]) error {
		if tx == nil {
			return errNotTransactional
		}
		rec := m.Value
		l, ok := s.p.upstream[rec.Topic]
		if !ok {
			return nil
		}
		run := func(st *S) error { return l(rec, s.p.codec, st) }
		return s.apply(ctx, tx, m.Epoch, s.p.key(rec.Key), run, rec.Metadata, rec.CascadeDepth+1)
	}
}

// apply runs one listener on key's read model and stores the result with
// its read-model topic message, in tx: in the query table, or in its shadow
// while the consumer's epoch is a rebuild's replay.
func (s *Store[S]) apply(ctx context.Context, tx *sql.Tx, epoch int64, key string, run func(*S) error, metadata []byte, depth int) error {
	t, err := s.targetOf(ctx, tx, epoch)
	if err != nil {
		return err
	}
	cur, err := s.load(ctx, tx, t.st, key)
	if err != nil {
		return err
	}
	state := cur.state
	deleted, err := runOn(run, &state)
	if err != nil {
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
		Metadata: metadata, CascadeDepth: depth, Deleted: deleted})
	if err != nil {
		return err
	}
	if deleted {
		return s.remove(ctx, tx, t, key, cur)
	}
	return s.save(ctx, tx, t, key, cur, &state, id)
}

// DefaultTxBatch is the consumer.Options.TxBatch of Options: listeners
// write only in the apply's transaction, so a chunk rolled back and applied
// again leaves nothing twice, and one commit per chunk instead of per event
// is most of a catch-up's cost.
const DefaultTxBatch = 256

// Options are the consumer options that run the projection over its
// sources: the event store (consumer.EventStore) when it listens to
// events, and the read-model topic of each projection it is chained on
// (consumer.ReadModelTopic). It is Transactional, named after the
// projection, applies up to DefaultTxBatch messages of a partition per
// transaction (a listener's error rolls its chunk back and the chunk is
// applied one message at a time), and runs one worker for a Global
// projection (every message updates one read model). Leases, retries,
// the error policy (OnError: Halt, the default, Skip or SkipKey) and
// metrics are the caller's to add. A source it does not listen to, or a listened one
// missing, is refused.
func (s *Store[S]) Options(sources ...consumer.Source) (consumer.Options, error) {
	o := consumer.Options{Type: ConsumerType, Name: s.p.name, Transactional: true, TxBatch: DefaultTxBatch, AfterPoll: s.afterPoll}
	if s.p.scope == Global {
		o.Workers = 1
	}
	need := map[string]bool{}
	for n := range s.p.upstream {
		need[topic.ReadModelSourcePrefix+n] = true
	}
	events := false
	for _, src := range sources {
		switch src := src.(type) {
		case consumer.SourceOf[eventstore.Recorded]:
			if len(s.p.listeners) == 0 || events {
				return o, &DeclarationError{Projection: s.p.name, What: "an event-store source it has no (or a second) use for"}
			}
			events = true
			o.Routes = append(o.Routes, consumer.OnChunk(src, s.ChunkHandler()))
		case consumer.SourceOf[topic.ReadModelRecord]:
			if !need[src.Name()] {
				return o, &DeclarationError{Projection: s.p.name, What: fmt.Sprintf("source %s: no OnReadModel listener for it", src.Name())}
			}
			delete(need, src.Name())
			o.Routes = append(o.Routes, consumer.OnChunk(src, s.ReadModelChunkHandler()))
		default:
			return o, &DeclarationError{Projection: s.p.name, What: fmt.Sprintf("source %s holds neither events nor read models", src.Name())}
		}
	}
	if len(s.p.listeners) > 0 && !events {
		need["the event store"] = true
	}
	if len(need) > 0 {
		missing := make([]string, 0, len(need))
		for n := range need {
			missing = append(missing, n)
		}
		sort.Strings(missing)
		return o, &DeclarationError{Projection: s.p.name, What: "no source given for " + strings.Join(missing, ", ")}
	}
	compact, err := s.compactor()
	if err != nil {
		return o, err
	}
	if compact != nil {
		o.Companions = append(o.Companions, compact)
	}
	return o, nil
}
