package projection

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/tidemarkdb/tidemark/core/consumer"
	"github.com/tidemarkdb/tidemark/core/eventstore"
	"github.com/tidemarkdb/tidemark/core/sqlerr"
	"github.com/tidemarkdb/tidemark/core/topic"
)

// step is one message's apply: the read model it updates and its listener;
// first when the message is its aggregate's first event, so (under
// Aggregate scope) no earlier event made the read model.
type step[S any] struct {
	key      string
	run      func(*S) error
	metadata []byte
	depth    int
	first    bool
}

// ChunkHandler is Handler a chunk at a time (consumer.OnChunk): the
// chunk's read models are read in one statement per 64, its listeners
// run in order on them in memory, every state (or tombstone) is published
// in one multi-row insert, new rows are inserted in one and deleted ones
// deleted in one (a read model that existed and still does is updated in
// a statement of its own, as one apply would); the outcome is the one of applying each event on its own, and a chunk that
// fails is applied again that way by the runner (which tells the error of
// each event).
func (s *Store[S]) ChunkHandler() consumer.ChunkHandler[eventstore.Recorded] {
	return func(ctx context.Context, tx *sql.Tx, ms []consumer.Msg[eventstore.Recorded]) error {
		if tx == nil {
			return errNotTransactional
		}
		steps := make([]step[S], 0, len(ms))
		for _, m := range ms {
			if key, run, ok := s.p.eventListener(m.Value); ok {
				first := s.p.scope == Aggregate && m.Value.SequenceNo == 0
				steps = append(steps, step[S]{key: key, run: run, metadata: m.Value.Metadata, depth: 1, first: first})
			}
		}
		return s.applySteps(ctx, tx, ms[0].Epoch, steps)
	}
}

// ReadModelChunkHandler is ReadModelHandler a chunk at a time.
func (s *Store[S]) ReadModelChunkHandler() consumer.ChunkHandler[topic.ReadModelRecord] {
	return func(ctx context.Context, tx *sql.Tx, ms []consumer.Msg[topic.ReadModelRecord]) error {
		if tx == nil {
			return errNotTransactional
		}
		steps := make([]step[S], 0, len(ms))
		for _, m := range ms {
			rec := m.Value
			l, ok := s.p.upstream[rec.Topic]
			if !ok {
				continue
			}
			run := func(st *S) error { return l(rec, s.p.codec, st) }
			steps = append(steps, step[S]{key: s.p.key(rec.Key), run: run, metadata: rec.Metadata, depth: rec.CascadeDepth + 1})
		}
		return s.applySteps(ctx, tx, ms[0].Epoch, steps)
	}
}

// chunkModel is one read model through a chunk's apply.
type chunkModel[S any] struct {
	key     string
	state   S
	pending []byte // the state's last payload, decoded before the next step (as a load would)
	oldID   string // the message its row held when read ("" for no row)
	exists  bool   // a row exists after the steps so far
	last    int    // index of its latest published message; -1 for none
	assumed bool   // taken for new without a read (loadChunk)
}

// errAssumedExists: a read model the chunk took for new exists; the chunk
// is applied again one event at a time, each loaded.
var errAssumedExists = errors.New("projection: a read model taken for new exists; applying the chunk one event at a time")

// applySteps applies steps in tx as apply would one by one.
func (s *Store[S]) applySteps(ctx context.Context, tx *sql.Tx, epoch int64, steps []step[S]) error {
	switch len(steps) {
	case 0:
		return nil
	case 1:
		st := steps[0]
		return s.apply(ctx, tx, epoch, st.key, st.run, st.metadata, st.depth)
	}
	t, err := s.targetOf(ctx, tx, epoch)
	if err != nil {
		return err
	}
	models, order, assumed, err := s.loadChunk(ctx, tx, t, steps)
	if err != nil {
		return err
	}
	if err := s.runSteps(ctx, tx, t, steps, models, order); err != nil {
		if assumed && errors.Is(err, sqlerr.ErrUniqueViolation) {
			// A read model taken for new existed (aggregate types sharing
			// ids, or a checkpoint moved back): stop assuming. The runner
			// applies the chunk again one event at a time, each loaded.
			s.loadFirsts.Store(true)
		}
		return err
	}
	return nil
}

// runSteps runs the chunk's listeners on its loaded read models, publishes
// every state and writes the rows.
func (s *Store[S]) runSteps(ctx context.Context, tx *sql.Tx, t target, steps []step[S], models map[string]*chunkModel[S], order []string) error {
	var err error
	msgs := make([]stateMessage, 0, len(steps))
	for _, st := range steps {
		m := models[st.key]
		if m.pending != nil {
			if m.state, err = s.p.decodeState(m.key, m.pending); err != nil {
				return err
			}
			m.pending = nil
		}
		deleted, err := runOn(st.run, &m.state)
		if err != nil {
			return err
		}
		if deleted && m.assumed {
			// No row would be deleted, nor one inserted to fail on its
			// key: read it now, the one case the assumption is checked.
			if err := s.confirmNew(ctx, tx, t, m.key); err != nil {
				return err
			}
			m.assumed = false
		}
		if deleted && !m.exists {
			m.state = s.p.init(m.key) // nothing stored to delete: the next step starts anew
			continue
		}
		payload, err := s.p.codec.Marshal(m.state)
		if err != nil {
			return err
		}
		msgs = append(msgs, stateMessage{Key: m.key, Type: s.p.typeName, Payload: payload,
			Metadata: st.metadata, CascadeDepth: st.depth, Deleted: deleted})
		m.last = len(msgs) - 1
		m.exists = !deleted
		if deleted {
			m.state = s.p.init(m.key)
		} else {
			m.pending = payload
		}
	}
	ids, err := s.log.publishAll(ctx, tx, msgs)
	if err != nil {
		return err
	}
	return s.writeChunk(ctx, tx, t, order, models, ids)
}

// confirmNew checks that key, taken for new, has no row.
func (s *Store[S]) confirmNew(ctx context.Context, tx *sql.Tx, t target, key string) error {
	cur, err := s.load(ctx, tx, t.st, key)
	if err != nil {
		return err
	}
	if cur.messageID != "" {
		s.loadFirsts.Store(true)
		return errAssumedExists
	}
	return nil
}

// loadChunk reads the read models steps update, in one statement per
// maxInList keys: each by its key, and the keys in first-step order. A
// read model whose first step is its aggregate's first event is taken for
// new without a read (assumed), outside a rebuild's shadow and until such
// an assumption once proved wrong: its insert then fails on the row's key,
// which rolls the chunk back.
func (s *Store[S]) loadChunk(ctx context.Context, tx *sql.Tx, t target, steps []step[S]) (models map[string]*chunkModel[S], order []string, assumed bool, err error) {
	models = make(map[string]*chunkModel[S], len(steps))
	order = make([]string, 0, len(steps))
	load := make([]string, 0, len(steps))
	trust := !t.shadow && !s.loadFirsts.Load()
	for _, st := range steps {
		if models[st.key] == nil {
			models[st.key] = &chunkModel[S]{key: st.key, state: s.p.init(st.key), last: -1}
			order = append(order, st.key)
			if trust && st.first {
				models[st.key].assumed, assumed = true, true
			} else {
				load = append(load, st.key)
			}
		}
	}
	err = t.st.chunk.loadMany(ctx, tx, load, func(key string, msgID, payload sql.NullString) error {
		m := models[key]
		if m == nil {
			return nil
		}
		m.oldID, m.exists = msgID.String, msgID.String != ""
		if payload.Valid {
			var err error
			m.state, err = s.p.decodeState(key, []byte(payload.String))
			return err
		}
		return nil
	})
	if err != nil {
		return nil, nil, false, fmt.Errorf("projection %q: loading %d read models: %w", s.p.name, len(load), err)
	}
	return models, order, assumed, nil
}

// writeChunk brings the rows of the chunk's read models to their last
// states: a read model that existed is updated (or deleted) conditioned on
// the message its row held, as one apply would (a row another apply
// changed conflicts and the chunk is retried; an update, not a deletion
// and an insert, so a reader paging concurrently never misses the row),
// the new read models are inserted in multi-row inserts pointing at their
// last message, and READ_MODEL_EPOCHS gains the new read models and loses
// the deleted ones.
func (s *Store[S]) writeChunk(ctx context.Context, tx *sql.Tx, t target, order []string, models map[string]*chunkModel[S], ids []string) error {
	var removed, olds, added []string
	var rows [][]any
	for _, key := range order {
		m := models[key]
		switch {
		case m.last < 0:
			// every step deleted a read model that was not stored
		case m.oldID != "" && m.exists:
			if err := s.save(ctx, tx, t, key, current[S]{messageID: m.oldID}, &m.state, ids[m.last]); err != nil {
				return err
			}
		case m.oldID != "":
			removed, olds = append(removed, key), append(olds, m.oldID)
		case m.exists:
			row, err := s.rowOf(key, ids[m.last], &m.state)
			if err != nil {
				return err
			}
			rows, added = append(rows, row), append(added, key)
		}
	}
	st := t.st.chunk
	if len(removed) > 0 {
		n, err := st.removeMany(ctx, tx, removed, olds)
		if err != nil {
			return s.writeErr(removed[0], err)
		}
		if n != int64(len(removed)) {
			return &ConflictError{Projection: s.p.name, Key: removed[0]}
		}
	}
	if err := st.insertRows(ctx, tx, rows); err != nil {
		return s.writeErr(order[0], err)
	}
	return s.writeErr(order[0], s.chunkEpochs(ctx, tx, t, added, removed))
}

// rowOf is a query-table row of key pointing at msgID: its key, the
// message id and each field's column value.
func (s *Store[S]) rowOf(key, msgID string, state *S) ([]any, error) {
	row := make([]any, 2, 2+len(s.p.fields))
	row[0], row[1] = key, msgID
	for i := range s.p.fields {
		v, err := s.columnValue(&s.p.fields[i], state)
		if err != nil {
			return nil, err
		}
		row = append(row, v)
	}
	return row, nil
}

// chunkEpochs writes the READ_MODEL_EPOCHS rows of a chunk's new read
// models (t's epoch; in a rebuild's shadow over the live read model's row
// of the same key, as markEpoch does) and deletes those of its deleted
// ones.
func (s *Store[S]) chunkEpochs(ctx context.Context, tx *sql.Tx, t target, added, removed []string) error {
	st := t.st.chunk
	drop := removed
	if t.shadow {
		drop = append(append([]string(nil), removed...), added...)
	}
	if len(drop) > 0 {
		if err := st.removeEpochs(ctx, tx, s.p.name, drop); err != nil {
			return err
		}
	}
	if len(added) == 0 {
		return nil
	}
	rows := make([][]any, len(added))
	for i, key := range added {
		rows[i] = []any{s.p.name, key, t.epoch}
	}
	return st.insertEpochs(ctx, tx, rows)
}
