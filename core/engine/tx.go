package engine

import (
	"context"
	"database/sql"

	"github.com/tidemarkdb/tidemark/core/dialect"
)

// Operation is what a transaction the core begins is for; each has its
// declared isolation level (Catalogue.Isolation).
type Operation int

// Operations.
const (
	OpAppend Operation = iota // an append's own transaction
	// OpWrite is a write of the core's own bookkeeping (consumer rows,
	// checkpoints, undelivered messages, skips), at an append's isolation.
	OpWrite
	OpHWM  // the high-water-mark advancer's transactions
	OpRead // a read spanning several statements
)

var isolationLevels = map[dialect.IsolationLevel]sql.IsolationLevel{
	dialect.IsolationDefault:         sql.LevelDefault,
	dialect.IsolationReadUncommitted: sql.LevelReadUncommitted,
	dialect.IsolationReadCommitted:   sql.LevelReadCommitted,
	dialect.IsolationRepeatableRead:  sql.LevelRepeatableRead,
	dialect.IsolationSnapshot:        sql.LevelSnapshot,
	dialect.IsolationSerializable:    sql.LevelSerializable,
}

// TxOptions are the options the core begins op's transactions with: the
// declared isolation level.
func (e *Engine) TxOptions(op Operation) *sql.TxOptions {
	var l dialect.IsolationLevel
	switch op {
	case OpAppend, OpWrite:
		l = e.Cat.Isolation.Append
	case OpHWM:
		l = e.Cat.Isolation.HWM
	case OpRead:
		l = e.Cat.Isolation.Read
	}
	return &sql.TxOptions{Isolation: isolationLevels[l]}
}

// BeginTx begins a transaction for op on the engine's *sql.DB with the
// dialect's declared isolation level. Its error is classified (see Exec).
// A read-only engine refuses OpAppend, OpWrite and OpHWM (*ReadOnlyError); OpRead
// is BeginRead.
func (e *Engine) BeginTx(ctx context.Context, op Operation) (*sql.Tx, error) {
	switch op {
	case OpAppend:
		if err := e.refuse("begin a transaction to append"); err != nil {
			return nil, err
		}
	case OpWrite:
		if err := e.refuse("begin a transaction to write"); err != nil {
			return nil, err
		}
	case OpHWM:
		if err := e.refuse("begin a high-water-mark transaction"); err != nil {
			return nil, err
		}
	case OpRead:
		return e.BeginRead(ctx)
	}
	tx, err := e.DB.BeginTx(ctx, e.TxOptions(op))
	return tx, e.Errors.Wrap(err)
}

// BeginRead begins a read-only transaction at the dialect's declared read
// level (Isolation.Read): the reads the core makes in it (a mark and the
// page below it) run on one connection, so on one server, however the
// pool spreads connections over replicas. Read-only also keeps SQLite's
// _txlock=immediate from taking the write lock for a read.
func (e *Engine) BeginRead(ctx context.Context) (*sql.Tx, error) {
	opts := e.TxOptions(OpRead)
	opts.ReadOnly = !e.Cat.Isolation.ReadWriteReads
	tx, err := e.DB.BeginTx(ctx, opts)
	return tx, e.Errors.Wrap(err)
}
