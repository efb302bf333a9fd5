package saga

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/tidemarkdb/tidemark/core/consumer"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/eventstore"
	"github.com/tidemarkdb/tidemark/core/sqlerr"
	"github.com/tidemarkdb/tidemark/core/stmt"
)

// ConsumerType is CONSUMERS.consumer_type of every saga's consumer.
const ConsumerType = "saga"

var errNotTransactional = errors.New("saga: the consumer must be Transactional (use Store.Options)")

// Store is a saga bound to an engine: its event handler (run by a
// consumer: Options), its deadline delivery (registered with Deadlines)
// and its reads and retention.
type Store[S any] struct {
	s     *Saga[S]
	e     *engine.Engine
	table string
}

// ConflictError reports an update of an instance that another apply
// changed (or started) since this one read it; the apply is retried from a
// fresh read, without spending the consumer's failure budget.
type ConflictError struct{ SagaType, SagaID string }

func (e *ConflictError) Error() string {
	return fmt.Sprintf("saga %q: instance %q changed since it was read", e.SagaType, e.SagaID)
}

// Transient makes the consumer (and engine.InTx) retry the apply.
func (e *ConflictError) Transient() bool { return true }

// SagaIDError reports an event whose saga id (read off it by its handler's
// id function) is empty or longer than 255 bytes; nothing is written.
type SagaIDError struct{ SagaType, EventType, EventID, SagaID string }

func (e *SagaIDError) Error() string {
	return fmt.Sprintf("saga %q: event %s (%s) gives saga id %q: it must be 1 to 255 bytes", e.SagaType, e.EventID, e.EventType, e.SagaID)
}

// Open binds s to e: the declaration is checked and its table must be one
// of the engine's saga tables: the one schema.Config.Sagas declares for its
// type (its own table, derived or explicit), else WithTable's (one of
// schema.Config.SagaTables), else the shared one. Nothing runs on the
// database.
func Open[S any](e *engine.Engine, s *Saga[S]) (*Store[S], error) {
	if err := s.Check(); err != nil {
		return nil, err
	}
	table := s.table
	if declared, ok := e.Names.BySaga[s.typ]; ok {
		if table != "" && table != declared {
			return nil, &DeclarationError{SagaType: s.typ, What: fmt.Sprintf(
				"WithTable(%q) contradicts the table %q schema.Config.Sagas gives the saga", table, declared)}
		}
		table = declared
	}
	if table == "" {
		table = e.Names.Shared["saga_instances_table"]
	}
	if !slices.Contains(e.Names.SagaTables, table) {
		return nil, &DeclarationError{SagaType: s.typ, What: fmt.Sprintf(
			"saga table %q is not one the engine was opened with (%v): add it to schema.Config.SagaTables", table, e.Names.SagaTables)}
	}
	return &Store[S]{s: s, e: e, table: table}, nil
}

// Table is the saga's instance table.
func (st *Store[S]) Table() string { return st.table }

// Engine is the engine the store runs on (Deadlines refuses a store of
// another engine than its own).
func (st *Store[S]) Engine() *engine.Engine { return st.e }

// SagaType is the saga's type (Deadlines uses it to route deadlines).
func (st *Store[S]) SagaType() string { return st.s.typ }

// Instance is a saga instance as stored.
type Instance[S any] struct {
	ID        string
	SagaID    string
	State     S
	Version   int64
	Completed bool
}

// Handler applies one event in the consumer's transaction: find the
// instance its saga id names (create it for a start event), run the
// handler and save the state, conditioned on the version read. Events no
// handler is declared for, and events of no (or a completed) instance that
// do not start one, are passed over.
func (st *Store[S]) Handler() consumer.Handler[eventstore.Recorded] {
	return func(ctx context.Context, tx *sql.Tx, m consumer.Msg[eventstore.Recorded]) error {
		if tx == nil {
			return errNotTransactional
		}
		return st.Apply(ctx, tx, m.Value)
	}
}

// Apply is Handler's work on one stored event in tx (for callers that run
// their own transactions: a ConflictError then means run tx again).
func (st *Store[S]) Apply(ctx context.Context, tx *sql.Tx, rec eventstore.Recorded) error {
	r, ok := st.s.routes[rec.Type]
	if !ok {
		return nil
	}
	sagaID, apply, err := r.decode(rec, st.s.codec)
	if err != nil {
		return err
	}
	if sagaID == "" || len(sagaID) > 255 {
		return &SagaIDError{SagaType: st.s.typ, EventType: rec.Type, EventID: rec.ID, SagaID: sagaID}
	}
	sc := &scope{ctx: ctx, e: st.e, tx: tx, codec: st.s.codec, sagaType: st.s.typ, sagaID: sagaID, metadata: rec.Metadata, known: st.knows}
	return st.run(sc, r.starts, apply)
}

// knows tells whether the saga handles deadlines named name.
func (st *Store[S]) knows(name string) bool {
	_, ok := st.s.deadlines[name]
	return ok
}

// run loads the instance of sc, runs apply on it and saves it.
func (st *Store[S]) run(sc *scope, starts bool, apply applyFn[S]) error {
	cur, found, err := st.load(sc.ctx, sc.tx, sc.sagaID)
	if err != nil {
		return err
	}
	if found && cur.Completed || !found && !starts {
		return nil
	}
	if !found {
		cur = Instance[S]{SagaID: sc.sagaID, State: st.s.init(sc.sagaID)}
		sc.fresh = true
	}
	err = apply(sc, &cur.State)
	done := errors.Is(err, Complete)
	if err != nil && !done {
		return err
	}
	return st.save(sc, cur, found, done)
}

// load reads an instance in q.
func (st *Store[S]) load(ctx context.Context, q engine.Querier, sagaID string) (Instance[S], bool, error) {
	in := Instance[S]{SagaID: sagaID}
	r, err := stmt.QueryRowSagaLoad(ctx, st.e, q, stmt.SagaLoadParams{SagaType: st.s.typ, SagaID: sagaID, SagaInstancesTable: st.table})
	if errors.Is(err, sql.ErrNoRows) {
		return in, false, nil
	}
	if err != nil {
		return in, false, fmt.Errorf("saga %q: loading %q: %w", st.s.typ, sagaID, err)
	}
	in.ID, in.Version, in.Completed = string(r.ID), r.Version, r.Completed != 0
	if err := st.s.codec.Unmarshal([]byte(r.StateJson), &in.State); err != nil {
		return in, true, fmt.Errorf("saga %q: state of %q does not decode: %w", st.s.typ, sagaID, err)
	}
	return in, true, nil
}

// save writes the state: an insert at a random version for a new
// instance, else an update conditioned on the version read; completing
// also cancels every deadline of the instance.
func (st *Store[S]) save(sc *scope, cur Instance[S], found, done bool) error {
	body, err := st.s.codec.Marshal(cur.State)
	if err != nil {
		return fmt.Errorf("saga %q: state of %q does not encode: %w", st.s.typ, sc.sagaID, err)
	}
	if !found {
		if err := st.insert(sc, string(body)); err != nil {
			return err
		}
		// A new instance that completes at once: its row, then completion.
		if !done {
			return nil
		}
		if cur, _, err = st.load(sc.ctx, sc.tx, sc.sagaID); err != nil {
			return err
		}
	}
	p := stmt.SagaUpdateParams{StateJson: string(body), SagaType: st.s.typ, SagaID: sc.sagaID, Version: cur.Version, SagaInstancesTable: st.table}
	var res sql.Result
	if done {
		res, err = stmt.ExecSagaComplete(sc.ctx, st.e, sc.tx, stmt.SagaCompleteParams(p))
	} else {
		res, err = stmt.ExecSagaUpdate(sc.ctx, st.e, sc.tx, p)
	}
	if err != nil {
		return fmt.Errorf("saga %q: saving %q: %w", st.s.typ, sc.sagaID, err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		if err != nil {
			return fmt.Errorf("saga %q: saving %q: %w", st.s.typ, sc.sagaID, err)
		}
		return &ConflictError{SagaType: st.s.typ, SagaID: sc.sagaID}
	}
	if done {
		return sc.cancelAll()
	}
	return nil
}

// insert creates the instance's row; a concurrent start of the same
// instance is a ConflictError (the apply then finds it).
func (st *Store[S]) insert(sc *scope, body string) error {
	id, err := uuid.NewV7()
	if err != nil {
		return err
	}
	version, err := randomVersion()
	if err != nil {
		return err
	}
	_, err = stmt.ExecSagaInsert(sc.ctx, st.e, sc.tx, stmt.SagaInsertParams{ID: id.String(), SagaType: st.s.typ, SagaID: sc.sagaID,
		StateJson: body, Version: version, SagaInstancesTable: st.table})
	if errors.Is(err, sqlerr.ErrUniqueViolation) {
		return &ConflictError{SagaType: st.s.typ, SagaID: sc.sagaID}
	}
	if err != nil {
		return fmt.Errorf("saga %q: starting %q: %w", st.s.typ, sc.sagaID, err)
	}
	return nil
}

// randomVersion is a new instance's first version: a positive int63 from
// crypto/rand, so an instance started again under the id of a deleted one
// does not repeat a version the earlier one held. Half the range is kept
// free for the updates that follow.
func randomVersion() (int64, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return 0, fmt.Errorf("saga: random version: %w", err)
	}
	return int64(binary.BigEndian.Uint64(b[:])>>2) + 1, nil
}

// Get reads the instance sagaID (false when there is none).
func (st *Store[S]) Get(ctx context.Context, sagaID string) (Instance[S], bool, error) {
	var in Instance[S]
	var found bool
	err := st.e.RetryRead(ctx, func() (err error) {
		in, found, err = st.load(ctx, st.e.DB, sagaID)
		return err
	})
	return in, found, err
}

// PendingDeadlines counts the instance's pending deadlines.
func (st *Store[S]) PendingDeadlines(ctx context.Context, sagaID string) (int64, error) {
	r, err := stmt.QueryRowSagaDeadlinesPending(ctx, st.e, st.e.DB, stmt.SagaDeadlinesPendingParams{SagaType: st.s.typ, SagaID: sagaID})
	return r.N, err
}

// Purge deletes the saga's completed instances whose completed_at is more
// than olderThan before the database clock's now, except those with a
// pending deadline; it returns how many it deleted.
func (st *Store[S]) Purge(ctx context.Context, olderThan time.Duration) (int64, error) {
	return PurgeType(ctx, st.e, st.table, st.s.typ, olderThan)
}

// Options are the consumer options that run the saga over the event
// store: Transactional, named after the saga type. Leases, retries, error
// policy and metrics are the caller's to add.
func (st *Store[S]) Options(src consumer.SourceOf[eventstore.Recorded]) consumer.Options {
	return consumer.Options{Type: ConsumerType, Name: st.s.typ, Transactional: true,
		Routes: []consumer.Route{consumer.On(src, st.Handler())}}
}
