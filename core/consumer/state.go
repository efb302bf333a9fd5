package consumer

import (
	"context"
	"errors"

	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/stmt"
)

// Pause stops the consumer until Resume (running → PAUSED).
func (r *Registry) Pause(ctx context.Context, id string) error {
	_, err := r.moveByID(ctx, id, &step{move: movePause})
	return err
}

// Halt halts the consumer for reason (running → HALTED).
func (r *Registry) Halt(ctx context.Context, id string, reason HaltReason) error {
	_, err := r.moveByID(ctx, id, &step{move: moveHalt, reason: reason})
	return err
}

// Resume makes a paused or halted consumer run again; its halt reason
// goes, and its HALTED rows become FAILED with a fresh budget (failure
// count 0, due at once) in the same transaction, so the poison message is
// retried first.
func (r *Registry) Resume(ctx context.Context, id string) error {
	_, err := r.moveByID(ctx, id, &step{move: moveResume})
	return err
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
	s := &step{move: moveBeginRebuild}
	if _, err := r.moveByID(ctx, id, s); err != nil {
		return 0, err
	}
	return s.epoch, nil
}

// CompleteRebuild resets every checkpoint of the consumer to no position
// under epoch, deletes its undelivered rows and skips (what a poll begun
// before BeginRebuild may still have recorded) and makes it run again, in
// one transaction.
func (r *Registry) CompleteRebuild(ctx context.Context, id string, epoch int64) error {
	_, err := r.moveByID(ctx, id, &step{move: moveCompleteRebuild, epoch: epoch})
	return err
}

// moveByID reads consumer id and makes move s (see move).
func (r *Registry) moveByID(ctx context.Context, id string, s *step) (Changes, error) {
	c, err := r.Get(ctx, id)
	if err != nil {
		return Changes{}, err
	}
	return r.move(ctx, c, s)
}

// deleteDelivery deletes the consumer's undelivered rows and skips, on
// every source it has checkpoints on: a rebuild replays every message. A
// Transactional retry of an undelivered row deletes its row in its own
// transaction, so one straddling BeginRebuild either commits before it or
// finds its row gone and rolls back.
func (r *Registry) deleteDelivery(ctx context.Context, q engine.Querier, id string) error {
	rows, err := stmt.QueryCheckpointRead(ctx, r.e, q, stmt.CheckpointReadParams{ConsumerID: id})
	if err != nil {
		return err
	}
	sources := map[string]bool{}
	for rows.Next() {
		c, err := rows.Row()
		if err != nil {
			rows.Close()
			return err
		}
		sources[c.SourceName] = true
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return r.e.Errors.Wrap(err)
	}
	for src := range sources {
		if _, err := stmt.ExecAdminUndeliveredDeleteSource(ctx, r.e, q, stmt.AdminUndeliveredDeleteSourceParams{ConsumerID: id, SourceName: src}); err != nil {
			return err
		}
		if _, err := stmt.ExecAdminSkippedDeleteSource(ctx, r.e, q, stmt.AdminSkippedDeleteSourceParams{ConsumerID: id, SourceName: src}); err != nil {
			return err
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
