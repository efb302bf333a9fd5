package consumer

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/engine"
)

// allowed lists the states each transition starts from.
var allowed = map[State][]State{
	Paused:     {Running},                 // Pause
	Halted:     {Running},                 // Halt
	Running:    {Paused, Halted},          // Resume
	Rebuilding: {Running, Paused, Halted}, // BeginRebuild
}

// Pause stops the consumer until Resume (running → PAUSED).
func (r *Registry) Pause(ctx context.Context, id string) error {
	return r.transition(ctx, id, Paused, "")
}

// Halt halts the consumer for reason (running → HALTED).
func (r *Registry) Halt(ctx context.Context, id string, reason HaltReason) error {
	return r.transition(ctx, id, Halted, reason)
}

// Resume makes a paused or halted consumer run again; its halt reason goes.
func (r *Registry) Resume(ctx context.Context, id string) error {
	return r.transition(ctx, id, Running, "")
}

// transition is one compare-and-set write of the row: state, halt_reason
// and state_since (application clock) change together, only from a state
// the transition allows and only if no other writer changed it meanwhile.
func (r *Registry) transition(ctx context.Context, id string, to State, reason HaltReason) error {
	c, err := r.Get(ctx, id)
	if err != nil {
		return err
	}
	if !startsFrom(to, c.State) {
		return &TransitionError{ID: id, Consumer: c.Ref(), From: c.State, To: to, Actual: c.State}
	}
	var state, halt any
	if to != Running {
		state = string(to)
	}
	if reason != "" {
		halt = string(reason)
	}
	var n int64
	err = r.retryTransient(ctx, func() error {
		res, err := r.e.Exec(ctx, r.e.DB, dialect.ConsumerSetState, nil, map[string]any{
			"id": id, "state": state, "halt_reason": halt, "state_since": r.stamp(), "from_state": string(c.State)})
		if err == nil {
			n, err = res.RowsAffected()
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("consumer %s: %s: %w", c.label(), to, err)
	}
	if n == 0 {
		now, err := r.Get(ctx, id)
		if err != nil {
			return err
		}
		return &TransitionError{ID: id, Consumer: c.Ref(), From: c.State, To: to, Actual: now.State}
	}
	return nil
}

func startsFrom(to, from State) bool {
	for _, s := range allowed[to] {
		if s == from {
			return true
		}
	}
	return false
}

// BeginRebuild marks the consumer REBUILDING, raises its epoch by one and
// resets every checkpoint to no position under the new epoch (and deletes
// its undelivered rows and skips: every message is replayed), in one
// transaction, and returns the new epoch. That transaction writes every
// checkpoint row, which a Transactional apply writes before it commits: it
// waits for the applies holding those rows, and an apply that has not
// written its row yet finds the new epoch there and rolls back. So once
// BeginRebuild returns, no apply or checkpoint write of a poll begun under
// the old epoch commits any more; a non-transactional runner checks the
// epoch before every handler call (a call already running finishes).
func (r *Registry) BeginRebuild(ctx context.Context, id string) (int64, error) {
	c, err := r.Get(ctx, id)
	if err != nil {
		return 0, err
	}
	if !startsFrom(Rebuilding, c.State) {
		return 0, &TransitionError{ID: id, Consumer: c.Ref(), From: c.State, To: Rebuilding, Actual: c.State}
	}
	epoch := c.Epoch + 1
	refused := false
	err = r.inTx(ctx, func(tx *sql.Tx) error {
		refused = false
		res, err := r.e.Exec(ctx, tx, dialect.ConsumerBeginRebuild, nil, map[string]any{
			"id": id, "state": string(Rebuilding), "state_since": r.stamp(), "from_state": string(c.State)})
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			refused = true
			return err
		}
		if _, err := r.e.Exec(ctx, tx, dialect.CheckpointReset, nil, map[string]any{"consumer_id": id, "epoch": epoch}); err != nil {
			return err
		}
		return r.deleteDelivery(ctx, tx, id)
	})
	if err != nil {
		return 0, fmt.Errorf("consumer %s: begin rebuild: %w", c.label(), err)
	}
	if refused {
		now, _ := r.Get(ctx, id)
		return 0, &TransitionError{ID: id, Consumer: c.Ref(), From: c.State, To: Rebuilding, Actual: now.State}
	}
	return epoch, nil
}

// CompleteRebuild resets every checkpoint of the consumer to no position
// under epoch, deletes its undelivered rows and skips (what a poll begun
// before BeginRebuild may still have recorded) and makes it run again, in
// one transaction.
func (r *Registry) CompleteRebuild(ctx context.Context, id string, epoch int64) error {
	return r.e.InTx(ctx, engine.OpWrite, engine.DefaultTransientRetry, func(tx *sql.Tx) error {
		if _, err := r.e.Exec(ctx, tx, dialect.CheckpointReset, nil, map[string]any{"consumer_id": id, "epoch": epoch}); err != nil {
			return err
		}
		if err := r.deleteDelivery(ctx, tx, id); err != nil {
			return err
		}
		res, err := r.e.Exec(ctx, tx, dialect.ConsumerSetState, nil, map[string]any{
			"id": id, "state": nil, "halt_reason": nil, "state_since": r.stamp(), "from_state": string(Rebuilding)})
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			terr := &TransitionError{ID: id, From: Rebuilding, To: Running}
			if c, err := r.Get(ctx, id); err == nil {
				terr.Consumer, terr.Actual = c.Ref(), c.State
			}
			return terr
		}
		return nil
	})
}

// deleteDelivery deletes the consumer's undelivered rows and skips, on
// every source it has checkpoints on: a rebuild replays every message. A
// Transactional retry of an undelivered row deletes its row in its own
// transaction, so one straddling BeginRebuild either commits before it or
// finds its row gone and rolls back.
func (r *Registry) deleteDelivery(ctx context.Context, tx *sql.Tx, id string) error {
	rows, err := r.e.Query(ctx, tx, dialect.CheckpointRead, nil, map[string]any{"consumer_id": id})
	if err != nil {
		return err
	}
	sources := map[string]bool{}
	for rows.Next() {
		var (
			src        string
			part       int
			pos, epoch sql.NullInt64
		)
		if err := rows.Scan(&src, &part, &pos, &epoch); err != nil {
			rows.Close()
			return r.e.Errors.Wrap(err)
		}
		sources[src] = true
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return r.e.Errors.Wrap(err)
	}
	for src := range sources {
		for _, st := range []dialect.StatementID{dialect.AdminUndeliveredDeleteSource, dialect.AdminSkippedDeleteSource} {
			if _, err := r.e.Exec(ctx, tx, st, nil, map[string]any{"consumer_id": id, "source_name": src}); err != nil {
				return err
			}
		}
	}
	return nil
}

// Rebuild is BeginRebuild then CompleteRebuild; it returns the new epoch.
func (r *Registry) Rebuild(ctx context.Context, id string) (int64, error) {
	epoch, err := r.BeginRebuild(ctx, id)
	if err != nil {
		return 0, err
	}
	return epoch, r.CompleteRebuild(ctx, id, epoch)
}

// retryTransient runs fn again while it fails with a transient database
// error (the database undid the attempt), within the core's bound
// (engine.DefaultTransientRetry): the registry's and the operator's writes
// fail after it rather than hang.
func (r *Registry) retryTransient(ctx context.Context, fn func() error) error {
	return engine.DefaultTransientRetry.Do(ctx, r.e.Transient, fn)
}

// anyTime is the engine's driver-value time scanner.
type anyTime = engine.UTCTime
