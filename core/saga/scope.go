package saga

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/sqlerr"
	"github.com/tidemarkdb/tidemark/core/stmt"
)

// Context is what a saga handler runs with: the apply's context, and the
// saga instance and transaction that Schedule, Cancel and CancelAll write
// in.
type Context struct {
	context.Context
	sc *scope
}

// SagaID is the id of the instance the handler runs on.
func (c Context) SagaID() string { return c.sc.sagaID }

// Metadata is the metadata of what the handler runs for: the stored
// event's metadata in an event handler, the deadline's metadata_json in a
// deadline handler (the metadata of the event whose handler scheduled it);
// nil when there is none. A deadline scheduled from either handler stores
// it as its metadata_json.
func (c Context) Metadata() []byte {
	if c.sc == nil {
		return nil
	}
	return c.sc.metadata
}

// Tx is the apply's transaction: the handler's own writes to the same
// database commit or roll back with the saga's update.
func (c Context) Tx() *sql.Tx { return c.sc.tx }

// scope is one handler run: its transaction, its instance, and the
// metadata of the event that triggered it.
type scope struct {
	ctx      context.Context
	e        *engine.Engine
	tx       *sql.Tx
	codec    Codec
	sagaType string
	sagaID   string
	metadata []byte
	// known tells whether the saga handles deadlines of a name.
	known func(name string) bool
	// fresh is set while the handler runs on an instance this transaction
	// starts: it has no deadline yet (deadlines live with their instance:
	// completion deletes them, a purge keeps an instance that has one), so
	// Schedule need not cancel one first.
	fresh bool
	// touched names the deadlines this run scheduled or cancelled.
	touched map[string]bool
}

// mayHold tells whether a deadline name may be stored for the instance
// (written before this run, or by it).
func (sc *scope) mayHold(name string) bool { return !sc.fresh || sc.touched[name] }

// touch records that this run wrote deadline name.
func (sc *scope) touch(name string) {
	if sc.touched == nil {
		sc.touched = map[string]bool{}
	}
	sc.touched[name] = true
}

func (sc *scope) handlerCtx() Context { return Context{Context: sc.ctx, sc: sc} }

// When is when a deadline falls due: In(d) or At(t).
type When struct {
	in time.Duration
	at time.Time
}

// In is a deadline due d after the database clock's now.
func In(d time.Duration) When { return When{in: d} }

// At is a deadline due at t, read against the database clock (the
// process's clock is never consulted: t minus the database's now is the
// delay).
func At(t time.Time) When { return When{at: t} }

// ErrNoScope is returned by Schedule, Cancel and CancelAll called with a
// Context no saga handler gave.
var ErrNoScope = errors.New("saga: not inside a saga handler")

// InvalidDeadlineError reports a deadline refused before any SQL runs.
type InvalidDeadlineError struct{ Name, Reason string }

func (e *InvalidDeadlineError) Error() string {
	return fmt.Sprintf("saga deadline %q: %s", e.Name, e.Reason)
}

// Schedule schedules the instance's deadline name, due when, with payload
// (encoded with the saga's codec; nil for none), in the handler's
// transaction. A deadline of the same name is replaced.
func Schedule(ctx Context, name string, when When, payload any) error {
	sc := ctx.sc
	if sc == nil {
		return ErrNoScope
	}
	if name == "" || len(name) > 255 {
		return &InvalidDeadlineError{Name: name, Reason: "the name must be 1 to 255 characters"}
	}
	if sc.known != nil && !sc.known(name) {
		return &InvalidDeadlineError{Name: name, Reason: fmt.Sprintf("saga %q has no handler for it (OnDeadline)", sc.sagaType)}
	}
	var body *string
	if payload != nil {
		b, err := sc.codec.Marshal(payload)
		if err != nil {
			return &InvalidDeadlineError{Name: name, Reason: "payload does not encode: " + err.Error()}
		}
		s := string(b)
		body = &s
	}
	millis, err := sc.delay(when)
	if err != nil {
		return err
	}
	id, err := uuid.NewV7()
	if err != nil {
		return err
	}
	// Replacing is a DELETE then an INSERT. The DELETE is skipped where
	// no row can exist: on InnoDB (REPEATABLE READ) a DELETE that finds
	// nothing locks the gap, and concurrent starts inserting into that gap
	// waited on each other (a saga start on MariaDB ran at 150-200 ev/s).
	if sc.mayHold(name) {
		if _, err := Cancel(ctx, name); err != nil {
			return err
		}
	}
	sc.touch(name)
	var meta *string
	if len(sc.metadata) > 0 {
		m := string(sc.metadata)
		meta = &m
	}
	_, err = stmt.ExecSagaDeadlineSchedule(sc.ctx, sc.e, sc.tx, stmt.SagaDeadlineScheduleParams{ID: id.String(),
		SagaType: sc.sagaType, SagaID: sc.sagaID, Name: name, DueMillis: millis, PayloadJson: body, MetadataJson: meta})
	if errors.Is(err, sqlerr.ErrUniqueViolation) && !sc.mayHold(name) {
		return fmt.Errorf("saga %q %s: scheduling deadline %q: a deadline of that name is stored for an instance that does not exist (its row deleted outside Tidemark?): %w", sc.sagaType, sc.sagaID, name, err)
	}
	if err != nil {
		return fmt.Errorf("saga %q %s: scheduling deadline %q: %w", sc.sagaType, sc.sagaID, name, err)
	}
	return nil
}

// delay is when as milliseconds from the database clock's now.
func (sc *scope) delay(when When) (int64, error) {
	if when.at.IsZero() {
		return ceilMillis(when.in), nil
	}
	now, err := stmt.QueryRowDatabaseNow(sc.ctx, sc.e, sc.tx)
	if err != nil {
		return 0, fmt.Errorf("saga: reading the database clock: %w", err)
	}
	return ceilMillis(when.at.Sub(time.Time(now.Now))), nil
}

// ceilMillis is d in whole milliseconds, rounded up: the database adds
// the delay to its clock in milliseconds, and a deadline rounded down
// would fall due up to a millisecond before its time.
func ceilMillis(d time.Duration) int64 {
	ms := d.Milliseconds() // toward zero: already up for a negative d
	if d > time.Duration(ms)*time.Millisecond {
		ms++
	}
	return ms
}

// Cancel cancels the instance's deadline name in the handler's
// transaction and reports whether one was pending. A deadline being
// delivered concurrently is either delivered or cancelled, never both:
// both delete its row, and the loser sees no row (Cancel then waits for
// the delivery's transaction and returns false).
func Cancel(ctx Context, name string) (bool, error) {
	sc := ctx.sc
	if sc == nil {
		return false, ErrNoScope
	}
	if !sc.mayHold(name) {
		return false, nil // a new instance's deadline not scheduled yet
	}
	res, err := stmt.ExecSagaDeadlineCancel(sc.ctx, sc.e, sc.tx, stmt.SagaDeadlineCancelParams{SagaType: sc.sagaType, SagaID: sc.sagaID, Name: name})
	if err != nil {
		return false, fmt.Errorf("saga %q %s: cancelling deadline %q: %w", sc.sagaType, sc.sagaID, name, err)
	}
	n, err := res.RowsAffected()
	return n > 0, err
}

// CancelAll cancels every pending deadline of the instance.
func CancelAll(ctx Context) error {
	sc := ctx.sc
	if sc == nil {
		return ErrNoScope
	}
	return sc.cancelAll()
}

func (sc *scope) cancelAll() error {
	if sc.fresh && len(sc.touched) == 0 {
		return nil // a new instance that scheduled nothing
	}
	_, err := stmt.ExecSagaDeadlineCancelAll(sc.ctx, sc.e, sc.tx, stmt.SagaDeadlineCancelAllParams{SagaType: sc.sagaType, SagaID: sc.sagaID})
	if err != nil {
		return fmt.Errorf("saga %q %s: cancelling its deadlines: %w", sc.sagaType, sc.sagaID, err)
	}
	return nil
}
