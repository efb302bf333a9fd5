package projection

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/tidemarkdb/tidemark/core/consumer"
	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/schema"
	"github.com/tidemarkdb/tidemark/core/sqlerr"
	"github.com/tidemarkdb/tidemark/core/topic"
)

// Store is a projection bound to an engine: its apply (Handler, run by a
// consumer: Options) and its reads (Get, Find, FindUnique, Count).
type Store[S any] struct {
	p     *Projection[S]
	e     *engine.Engine
	table string
	log   stateLog
	topic *topic.ReadModelTopic
	stmts statements
	rules columnRules

	// The rebuild: the shadow table, its statements and the switch's; the
	// consumer (its id: "" on a read-only engine that found none) and
	// whether each of its epochs is a replay.
	shadow      string
	shadowStmts statements
	swap        switchStatements
	reg         *consumer.Registry
	consumerID  string
	mu          sync.Mutex
	modes       map[int64]bool
	compaction  Compaction // under mu

	// loadFirsts: a read model an aggregate's first event starts proved to
	// exist once; chunks read every read model from then on (loadChunk).
	loadFirsts atomic.Bool
}

// ConflictError reports a save of a read model another apply changed
// since this one read it; the apply is retried from a fresh read.
type ConflictError struct{ Projection, Key string }

func (e *ConflictError) Error() string {
	return fmt.Sprintf("projection %q: read model %q changed since it was read", e.Projection, e.Key)
}

// Transient makes the consumer retry the apply (sqlerr.Transient).
func (e *ConflictError) Transient() bool { return true }

// Open binds p to e: the declaration is checked, the query table must have
// been declared at e's Open (p.QueryTable() in engine.Config.QueryTables)
// with the same fields, and the projection's read-model topic is opened.
// Nothing is written when the declaration is refused. On a writable
// engine the projection's consumer row is created (with the declaration's
// fingerprint) when missing, and its shadow table (for rebuilds) when
// missing. A declaration whose fingerprint differs from the stored one
// halts the consumer with DECLARATION_CHANGED and is refused with a
// *DeclarationChangedError (Rebuild or Accept clear it); while a rebuild
// replays, the fingerprint is not compared (the switch stores it).
func Open[S any](ctx context.Context, e *engine.Engine, p *Projection[S]) (*Store[S], error) {
	s, err := open(ctx, e, p)
	if err != nil {
		return nil, err
	}
	if err := s.checkFingerprint(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// open is Open without the fingerprint's comparison.
func open[S any](ctx context.Context, e *engine.Engine, p *Projection[S]) (*Store[S], error) {
	if err := p.Check(); err != nil {
		return nil, err
	}
	qt, err := e.QueryTable(p.name)
	if err != nil {
		return nil, err
	}
	if err := sameFields(p.name, qt, p.QueryTable()); err != nil {
		return nil, err
	}
	if err := checkTableOwner(ctx, e, p.name, qt.Table); err != nil {
		return nil, err
	}
	l, err := openStateLog(ctx, e, p.name)
	if err != nil {
		return nil, err
	}
	s := &Store[S]{p: p, e: e, table: qt.Table, log: l, topic: l.t, rules: columnRulesOf(e.Cat)}
	if s.stmts, err = compileStatements(e, qt.Table, p.fields); err != nil {
		return nil, err
	}
	if err := s.openRebuild(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// sameFields refuses a store whose projection declares other query fields
// than the engine created or checked its table for.
func sameFields(name string, opened, declared schema.QueryTable) error {
	a, b := fieldSet(opened.Fields), fieldSet(declared.Fields)
	if a != b {
		return &DeclarationError{Projection: name, What: fmt.Sprintf(
			"its query fields (%s) differ from the query table the engine opened with (%s); open the engine with this projection's QueryTable()", b, a)}
	}
	return nil
}

// fieldSet is a field list in a comparable, readable form.
func fieldSet(fs []schema.QueryField) string {
	parts := make([]string, 0, len(fs))
	for _, f := range fs {
		s := strings.ToLower(f.Column) + " " + string(f.Kind)
		if f.Kind == Decimal {
			s += fmt.Sprintf("(%d,%d)", f.Precision, f.Scale)
		}
		if f.Unique {
			s += " unique"
		}
		parts = append(parts, s)
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// Table is the query table's name.
func (s *Store[S]) Table() string { return s.table }

// Topic is the projection's read-model topic: every save's state, every
// deletion's tombstone, in apply order per read model.
func (s *Store[S]) Topic() *topic.ReadModelTopic { return s.topic }

// Projection is the store's declaration.
func (s *Store[S]) Projection() *Projection[S] { return s.p }

// current is a read model as an apply found it.
type current[S any] struct {
	state     S
	messageID string // "" when no query-table row exists
	found     bool   // a row with a readable message exists
}

// load reads the read model of key in tx: its row and its message's
// state, or a new read model from init. A row whose message is gone
// (deleted from the records table underneath) reads as a new read model
// that replaces the row.
func (s *Store[S]) load(ctx context.Context, q engine.Querier, st *statements, key string) (current[S], error) {
	cur := current[S]{state: s.p.init(key)}
	var msgID, payload sql.NullString
	err := st.load.row(ctx, s.e, q, map[string]any{"key": key}).Scan(&msgID, &payload)
	if errors.Is(err, sql.ErrNoRows) {
		return cur, nil
	}
	if err != nil {
		return cur, fmt.Errorf("projection %q: loading read model %q: %w", s.p.name, key, err)
	}
	cur.messageID = msgID.String
	if !payload.Valid {
		return cur, nil
	}
	if cur.state, err = s.p.decodeState(key, []byte(payload.String)); err != nil {
		return cur, err
	}
	cur.found = true
	return cur, nil
}

// save points key's row (in t's table) at message msgID with the state's
// query fields: an insert for a new read model (with its READ_MODEL_EPOCHS
// row), else an update conditioned on the message it read.
func (s *Store[S]) save(ctx context.Context, tx *sql.Tx, t target, key string, cur current[S], state *S, msgID string) error {
	args := map[string]any{"key": key, "message_id": msgID, "old": cur.messageID}
	for i := range s.p.fields {
		v, err := s.columnValue(&s.p.fields[i], state)
		if err != nil {
			return err
		}
		args[fieldBind(i)] = v
	}
	if cur.messageID == "" {
		if _, err := t.st.insert.exec(ctx, s.e, tx, args); err != nil {
			return s.insertErr(ctx, tx, t, key, args, err)
		}
		return s.writeErr(key, s.markEpoch(ctx, tx, t, key))
	}
	res, err := t.st.update.exec(ctx, s.e, tx, args)
	if err != nil {
		return s.uniqueErr(key, args, err)
	}
	return s.conditioned(key, res, err)
}

// markEpoch writes the READ_MODEL_EPOCHS row of a new read model: epoch 0
// outside a rebuild; a replay's epoch in the shadow, over the row of the
// live read model of the same key when there is one.
func (s *Store[S]) markEpoch(ctx context.Context, tx *sql.Tx, t target, key string) error {
	binds := map[string]any{"projection": s.p.name, "key": key, "epoch": t.epoch}
	if t.shadow {
		res, err := t.st.setEpoch.exec(ctx, s.e, tx, binds)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n > 0 {
			return err
		}
	}
	_, err := t.st.insertEpoch.exec(ctx, s.e, tx, binds)
	return err
}

// remove deletes key's row (conditioned on the message it read) and its
// READ_MODEL_EPOCHS row.
func (s *Store[S]) remove(ctx context.Context, tx *sql.Tx, t target, key string, cur current[S]) error {
	res, err := t.st.remove.exec(ctx, s.e, tx, map[string]any{"key": key, "old": cur.messageID})
	if err := s.conditioned(key, res, err); err != nil {
		return err
	}
	_, err = t.st.removeEpoch.exec(ctx, s.e, tx, map[string]any{"projection": s.p.name, "key": key})
	return s.writeErr(key, err)
}

func (s *Store[S]) conditioned(key string, res sql.Result, err error) error {
	if err != nil {
		return s.writeErr(key, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return s.writeErr(key, err)
	}
	if n == 0 {
		return &ConflictError{Projection: s.p.name, Key: key}
	}
	return nil
}

// insertErr tells a new read model's insert refused because another apply
// inserted the same key first — a *ConflictError, re-applied from a fresh
// read without spending the failure budget, as a lost conditioned update
// is — from one refused for a duplicate value of a unique field (the
// application's error: a *UniqueFieldError). The unique violation does not
// say which key it was on every engine; the row of key does: the losing
// insert waited for the winner's commit, so the row is there to read (on
// the pool, or in the refused transaction where the engine's readers wait
// for writers: Locks.ConflictRead).
func (s *Store[S]) insertErr(ctx context.Context, tx *sql.Tx, t target, key string, args map[string]any, err error) error {
	if !errors.Is(err, sqlerr.ErrUniqueViolation) {
		return s.writeErr(key, err)
	}
	var q engine.Querier = s.e.DB
	if s.e.Cat.Locks.ConflictRead == dialect.ConflictReadInTransaction {
		q = tx
	}
	if cur, lerr := s.load(ctx, q, t.st, key); lerr == nil && cur.messageID != "" {
		return &ConflictError{Projection: s.p.name, Key: key}
	}
	return s.uniqueErr(key, args, err)
}

func (s *Store[S]) writeErr(key string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("projection %q: writing read model %q: %w", s.p.name, key, err)
}

// columnValue is what f's column holds for state: the field's value
// converted to its kind and brought to the engine's rules (columnRules).
func (s *Store[S]) columnValue(f *field[S], state *S) (any, error) {
	v, err := f.conv(f.get(state))
	if err != nil {
		return nil, err
	}
	return s.rules.apply(f.decl, v)
}
