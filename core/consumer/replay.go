package consumer

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/stmt"
)

// ErrNotCaughtUp: a replay's switch was asked for before every checkpoint
// reached its source's replay_through (or while messages of the replay
// are still undelivered).
var ErrNotCaughtUp = errors.New("the replay has not caught up")

// ErrNotReplaying: the consumer has no replay in progress under the epoch
// asked for (none begun, or another instance switched it already).
var ErrNotReplaying = errors.New("no replay in progress")

// Replay is a consumer's rebuild replay as its checkpoints carry it.
type Replay struct {
	// Epoch is the consumer's epoch (the replay's while Replaying).
	Epoch int64 `json:"epoch"`
	// Replaying: replay_through is set on its checkpoints.
	Replaying bool `json:"replaying"`
	// Through is each replayed source's replay_through.
	Through map[string]int64 `json:"through,omitempty"`
	// CaughtUp: every checkpoint reached its source's replay_through.
	CaughtUp bool `json:"caught_up"`
}

// BeginReplay begins a rebuild that replays every source while the
// consumer's runners keep polling: in one transaction the consumer's epoch
// is raised (polls begun before are fenced off, as BeginRebuild), every
// checkpoint is reset to no position under it, its undelivered rows and
// skips go, the state becomes REBUILDING (a halt reason goes with it),
// each source's replay_through is set to through[source], and in runs
// (the caller's own writes of the rebuild, under the new epoch). It
// returns the new epoch. Until the switch (CompleteReplay) the runners
// read no source past its replay_through; the consumer may be paused or
// halted meanwhile, and resuming it goes back to REBUILDING. A replay in
// progress may be begun again (the new one supersedes it); an offline
// rebuild (REBUILDING without replay_through) may not.
func (r *Registry) BeginReplay(ctx context.Context, id string, through map[string]int64, in func(ctx context.Context, tx *sql.Tx, epoch int64) error) (int64, error) {
	var epoch int64
	err := r.inTx(ctx, func(tx *sql.Tx) error {
		c, err := r.get(ctx, tx, id)
		if err != nil {
			return err
		}
		s := &step{move: moveBeginReplay}
		if err := r.apply(ctx, tx, c, s, &Changes{}); err != nil {
			return err
		}
		for src, t := range through {
			if _, err := stmt.ExecCheckpointSetReplay(ctx, r.e, tx, stmt.CheckpointSetReplayParams{
				ConsumerID: id, SourceName: src, Through: t}); err != nil {
				return err
			}
		}
		epoch = s.epoch
		if in == nil {
			return nil
		}
		return in(ctx, tx, epoch)
	})
	return epoch, err
}

// ReplayOf reads consumer id's replay (on q: the engine's DB or a
// transaction).
func (r *Registry) ReplayOf(ctx context.Context, q engine.Querier, id string) (Replay, error) {
	c, err := r.get(ctx, q, id)
	if err != nil {
		return Replay{}, err
	}
	out := Replay{Epoch: c.Epoch, Through: map[string]int64{}, CaughtUp: true}
	rows, err := stmt.QueryCheckpointReadReplay(ctx, r.e, q, stmt.CheckpointReadReplayParams{ConsumerID: id})
	if err != nil {
		return Replay{}, err
	}
	through := map[partKey]int64{}
	for rows.Next() {
		row, err := rows.Row()
		if err != nil {
			rows.Close()
			return Replay{}, err
		}
		if row.ReplayThrough.Valid {
			out.Replaying = true
			out.Through[row.SourceName] = row.ReplayThrough.Int64
			through[partKey{row.SourceName, row.PartitionNo}] = row.ReplayThrough.Int64
		}
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return Replay{}, r.e.Errors.Wrap(err)
	}
	if !out.Replaying {
		out.Through, out.CaughtUp = nil, false
		return out, nil
	}
	cps, err := stmt.QueryCheckpointRead(ctx, r.e, q, stmt.CheckpointReadParams{ConsumerID: id})
	if err != nil {
		return Replay{}, err
	}
	defer cps.Close()
	for cps.Next() {
		cp, err := cps.Row()
		if err != nil {
			return Replay{}, err
		}
		if t := through[partKey{cp.SourceName, cp.PartitionNo}]; t > 0 && cp.Position.Int64 < t {
			out.CaughtUp = false
		}
	}
	return out, r.e.Errors.Wrap(cps.Err())
}

// CompleteReplay switches a caught-up replay begun under epoch: in one
// transaction, only while the consumer is still REBUILDING under epoch
// with every checkpoint at or past its replay_through and no undelivered
// row, it runs again (state NULL, state_since written), the epoch is
// raised again (polls begun under the replay's epoch are fenced off),
// replay_through is cleared on every checkpoint (positions kept: the
// consumer goes on past replay_through from where the replay got) and in
// runs under the new epoch. ErrNotCaughtUp or ErrNotReplaying (wrapped),
// or a *TransitionError while it is paused or halted, when it may not
// switch; nothing is written then.
func (r *Registry) CompleteReplay(ctx context.Context, id string, epoch int64, in func(ctx context.Context, tx *sql.Tx, epoch int64) error) error {
	return r.inTx(ctx, func(tx *sql.Tx) error {
		rp, err := r.ReplayOf(ctx, tx, id)
		if err != nil {
			return err
		}
		if !rp.Replaying || rp.Epoch != epoch {
			return fmt.Errorf("consumer %s, epoch %d: %w", id, epoch, ErrNotReplaying)
		}
		if !rp.CaughtUp {
			return fmt.Errorf("consumer %s: %w", id, ErrNotCaughtUp)
		}
		c, err := r.get(ctx, tx, id)
		if err != nil {
			return err
		}
		undelivered, err := r.undeliveredViews(ctx, tx, c)
		if err != nil {
			return err
		}
		if len(undelivered) > 0 {
			return fmt.Errorf("consumer %s: %d undelivered messages: %w", c.label(), len(undelivered), ErrNotCaughtUp)
		}
		if c.State != Rebuilding {
			return (&step{move: moveEndReplay}).refusal(c, c.State)
		}
		// Two compare-and-set writes of the row: REBUILDING → running, then
		// the epoch (only while running under the replay's). Of two switches
		// of one replay only the first changes the row.
		ok, err := r.writeState(ctx, tx, id, Rebuilding, Running, moveEndReplay, "")
		if err != nil {
			return err
		}
		next := epoch + 1
		n, err := rowsChanged(stmt.ExecConsumerEndReplay(ctx, r.e, tx, stmt.ConsumerEndReplayParams{ID: id, Epoch: &next, EpochFloor: epoch}))
		if err != nil {
			return err
		}
		if !ok || n == 0 { // another switch (or a move) got there first
			return fmt.Errorf("consumer %s, epoch %d: %w", id, epoch, ErrNotReplaying)
		}
		if _, err := stmt.ExecCheckpointEndReplay(ctx, r.e, tx, stmt.CheckpointEndReplayParams{ConsumerID: id, Epoch: &next}); err != nil {
			return err
		}
		if in == nil {
			return nil
		}
		return in(ctx, tx, next)
	})
}

// Fingerprint reads consumer id's declaration_fingerprint ("" for NULL).
func (r *Registry) Fingerprint(ctx context.Context, q engine.Querier, id string) (string, error) {
	row, err := stmt.QueryRowConsumerReadFingerprint(ctx, r.e, q, stmt.ConsumerReadFingerprintParams{ID: id})
	if errors.Is(err, sql.ErrNoRows) {
		return "", ErrNotFound
	}
	return row.DeclarationFingerprint.String, err
}

// SetFingerprint writes consumer id's declaration_fingerprint on q.
func (r *Registry) SetFingerprint(ctx context.Context, q engine.Querier, id, fp string) error {
	_, err := stmt.ExecConsumerSetFingerprint(ctx, r.e, q, stmt.ConsumerSetFingerprintParams{ID: id, DeclarationFingerprint: &fp})
	return err
}

// HaltIn halts consumer id for reason on q while it runs; false when it
// was not running (a replaying consumer, REBUILDING, is not halted).
func (r *Registry) HaltIn(ctx context.Context, q engine.Querier, id string, reason HaltReason) (bool, error) {
	return r.haltIn(ctx, q, id, Running, reason)
}

// AcceptDeclaration writes fp as consumer id's declaration fingerprint
// and, when it is halted with DECLARATION_CHANGED, makes it run again, in
// one transaction.
func (r *Registry) AcceptDeclaration(ctx context.Context, id, fp string) error {
	return r.inTx(ctx, func(tx *sql.Tx) error {
		c, err := r.get(ctx, tx, id)
		if err != nil {
			return err
		}
		if err := r.SetFingerprint(ctx, tx, id, fp); err != nil {
			return err
		}
		if c.State != Halted || c.HaltReason != DeclarationChanged {
			return nil
		}
		return r.apply(ctx, tx, c, &step{move: moveResume}, &Changes{})
	})
}
