package eventstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/stmt"
)

// This file reads stream versions and turns the database's refusals into
// the typed errors callers branch on (ConcurrencyError,
// AggregateIDTakenError, DuplicateEventError).

// versionMatches tells whether a stream at version actual (-1: empty)
// satisfies expected.
func versionMatches(expected ExpectedVersion, actual int64) bool {
	switch expected {
	case Any:
		return true
	case NoStream:
		return actual == -1
	case StreamExists:
		return actual >= 0
	}
	v, _ := expected.Exact()
	return v == actual
}

// streamVersion reads the version of stream id in table and the aggregate
// type holding it there (that of its last row; "" when there is none). The
// version is -1 when there is no row. A caller compares the owner with its
// own type first: the version of another type's stream is not its own.
func (s *Store) streamVersion(ctx context.Context, q queryer, table, id string) (int64, string, error) {
	r, err := stmt.QueryRowStreamVersion(ctx, s.e, q, stmt.StreamVersionParams{AggregateID: id, EventStoreTable: table})
	v, owner := r.SequenceNo, r.AggregateType
	if errors.Is(err, sql.ErrNoRows) {
		return -1, "", nil
	}
	if err != nil {
		return 0, "", fmt.Errorf("reading stream version: %w", err)
	}
	return v, owner, nil
}

// translate turns a unique violation into the typed error the caller
// branches on. The actual version is read where the dialect says
// (conflictReader): from committed state, since the conflicting append has
// committed by the time the database reports the violation. A failed read
// is the error's ReadErr, never a version. tx is the refused transaction,
// nil for an autocommit insert.
func (s *Store) translate(ctx context.Context, err error, streams []Stream, table string, tx queryer) error {
	switch s.e.Errors.Classify(err) {
	case dialect.ErrDuplicateEventID:
		return &DuplicateEventError{Table: table, Cause: s.e.Errors.Wrap(err)}
	case dialect.ErrUniqueViolation, dialect.ErrNotNullViolation:
		q := s.conflictReader(tx)
		var readErr error
		for _, st := range streams {
			t := s.eventTable(st.AggregateType)
			if table != "" && t != table {
				continue
			}
			actual, owner, verr := s.streamVersion(ctx, q, t, st.AggregateID)
			if verr != nil {
				if readErr == nil {
					readErr = &ConcurrencyError{AggregateType: st.AggregateType, AggregateID: st.AggregateID, Expected: st.Expected, Actual: UnknownVersion, ReadErr: verr}
				}
				continue
			}
			if owner != "" && owner != st.AggregateType {
				return &AggregateIDTakenError{Table: t, AggregateID: st.AggregateID, AggregateType: st.AggregateType, OwnerType: owner}
			}
			if want, ok := expectedAfterConflict(st); ok && want != actual || !ok {
				return &ConcurrencyError{AggregateType: st.AggregateType, AggregateID: st.AggregateID, Expected: st.Expected, Actual: actual}
			}
		}
		if readErr != nil {
			return readErr // the stream that conflicted may be the one not read
		}
		if len(streams) == 1 {
			st := streams[0]
			actual, _, verr := s.streamVersion(ctx, q, s.eventTable(st.AggregateType), st.AggregateID)
			if verr != nil {
				return &ConcurrencyError{AggregateType: st.AggregateType, AggregateID: st.AggregateID, Expected: st.Expected, Actual: UnknownVersion, ReadErr: verr}
			}
			return &ConcurrencyError{AggregateType: st.AggregateType, AggregateID: st.AggregateID, Expected: st.Expected, Actual: actual}
		}
	}
	return err
}

// conflictReader is where a refused append's versions are read: in its
// transaction where the dialect declares that (a locking engine, whose read
// on another connection would wait for this transaction's locks), else on
// the pool.
func (s *Store) conflictReader(tx queryer) queryer {
	if tx != nil && s.e.Cat.Locks.ConflictRead == dialect.ConflictReadInTransaction {
		return tx
	}
	return s.e.DB
}

// expectedAfterConflict is the version the stream would have had if the
// append had not raced: a stream whose version differs from it is the one
// that conflicted.
func expectedAfterConflict(st Stream) (int64, bool) {
	switch st.Expected {
	case NoStream:
		return -1, true
	}
	return st.Expected.Exact()
}
