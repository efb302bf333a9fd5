package sqlerr

import (
	"errors"

	"github.com/tidemarkdb/tidemark/core/dialect"
)

// ClassError is the type of the class sentinels (ErrDeadlock, …). Callers
// compare with errors.Is, never with ==, since what they get is an *Error
// wrapping the driver's error.
type ClassError struct {
	Class dialect.ErrorClass
	text  string
}

// Error returns the class's description.
func (c *ClassError) Error() string { return c.text }

// The class sentinels: errors.Is(err, ErrDeadlock) holds for an error an
// engine call returned when the dialect's rules classify it so.
var (
	ErrUniqueViolation     = &ClassError{dialect.ErrUniqueViolation, "unique constraint violation"}
	ErrForeignKeyViolation = &ClassError{dialect.ErrForeignKeyViolation, "foreign key violation"}
	ErrNotNullViolation    = &ClassError{dialect.ErrNotNullViolation, "not-null constraint violation"}
	// ErrDuplicateEvent is a violation of an event table's primary key, the
	// event id. It is also an ErrUniqueViolation.
	ErrDuplicateEvent       = &ClassError{dialect.ErrDuplicateEventID, "duplicate event id"}
	ErrDeadlock             = &ClassError{dialect.ErrDeadlock, "deadlock"}
	ErrLockTimeout          = &ClassError{dialect.ErrLockTimeout, "lock wait timeout"}
	ErrSerializationFailure = &ClassError{dialect.ErrSerializationFailure, "serialization failure"}
	ErrReadOnly             = &ClassError{dialect.ErrReadOnly, "read-only transaction or server"}
	ErrConnectionLost       = &ClassError{dialect.ErrConnectionLost, "connection lost"}
	ErrQueryCanceled        = &ClassError{dialect.ErrQueryCanceled, "query canceled"}
	ErrUndefinedTable       = &ClassError{dialect.ErrUndefinedTable, "undefined table"}
	// ErrStatementInvalidated: see dialect.ErrStatementInvalidated. The
	// engine retries such a statement once, freshly prepared, so callers
	// rarely see it.
	ErrStatementInvalidated = &ClassError{dialect.ErrStatementInvalidated, "prepared statement invalidated by a schema change"}
)

// ErrTransient is satisfied (errors.Is) by every error of a transient class;
// see IsTransient.
var ErrTransient = errors.New("transient database error: retrying the whole transaction may succeed")

var sentinels = map[dialect.ErrorClass]*ClassError{}

func init() {
	for _, s := range []*ClassError{ErrUniqueViolation, ErrForeignKeyViolation, ErrNotNullViolation,
		ErrDuplicateEvent, ErrDeadlock, ErrLockTimeout, ErrSerializationFailure, ErrReadOnly,
		ErrConnectionLost, ErrQueryCanceled, ErrUndefinedTable, ErrStatementInvalidated} {
		sentinels[s.Class] = s
	}
}

// Sentinel returns the sentinel of class, or nil for a class it does not know.
func Sentinel(class dialect.ErrorClass) error {
	if s, ok := sentinels[class]; ok {
		return s
	}
	return nil
}

// TransientClass reports whether errors of class are transient: the database
// refused this attempt for a reason that goes away by itself, so running the
// whole transaction again (on a fresh connection) may succeed. They are:
//
//   - deadlock: the engine chose this transaction as the victim and rolled
//     it back (PostgreSQL aborts it; MySQL/MariaDB, H2, SQL Server roll it
//     back). A Galera certification failure is reported the same way (1213).
//   - serialization failure: a concurrent commit conflicted (40001,
//     first-updater-wins engines, HSQLDB's MVCC conflicts and deadlocks).
//   - lock timeout: the holder of the lock will commit or roll back. MySQL
//     and MariaDB roll back only the statement (innodb_rollback_on_timeout
//     is off by default), so the caller must still roll back and rerun the
//     whole transaction, as for every transient error.
//   - connection lost: a new connection may reach the server. If it was lost
//     during COMMIT the outcome is unknown: the retry must be idempotent
//     (an append is, by its event ids).
//
// Not transient: query canceled (the caller's context or an operator's
// statement timeout decided it), read-only (a replica or a read-only
// transaction stays so; retrying on it spins), constraint violations and an
// undefined table (the same input fails the same way).
func TransientClass(class dialect.ErrorClass) bool {
	switch class {
	case dialect.ErrDeadlock, dialect.ErrSerializationFailure, dialect.ErrLockTimeout, dialect.ErrConnectionLost:
		return true
	}
	return false
}

// Transient is implemented by errors that know whether a retry may succeed.
// *Error implements it; a caller's own error types may too.
type Transient interface {
	error
	Transient() bool
}

// IsTransient reports whether err, or an error it wraps, is transient (see
// TransientClass). Retry loops branch on it.
func IsTransient(err error) bool {
	var t Transient
	return errors.As(err, &t) && t.Transient()
}

// Error is a classified database error: the class the dialect's rules gave
// it, what was read off it, and the driver's error, which it wraps:
// errors.As(err, &pgErr) still reaches *pgconn.PgError, and
// errors.Is(err, ErrDeadlock) holds for a deadlock.
type Error struct {
	Class   dialect.ErrorClass
	Details Details
	Err     error
}

// Error returns the driver error's text unchanged.
func (e *Error) Error() string { return e.Err.Error() }

// Unwrap returns the driver's error.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is the sentinel of the error's class; a
// duplicate event id is also a unique violation, and every transient class
// is ErrTransient.
func (e *Error) Is(target error) bool {
	switch target {
	case nil:
		return false
	case ErrTransient:
		return e.Transient()
	case ErrUniqueViolation:
		if e.Class == dialect.ErrDuplicateEventID {
			return true
		}
	}
	s, ok := sentinels[e.Class]
	return ok && target == error(s)
}

// Transient reports whether the class is transient (see TransientClass).
func (e *Error) Transient() bool { return TransientClass(e.Class) }
