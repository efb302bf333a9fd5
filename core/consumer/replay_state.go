package consumer

import (
	"context"
	"errors"

	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/stmt"
)

// A consumer rebuilt by a replay (a projection's rebuild without downtime,
// Registry.BeginReplay) is REBUILDING from the begin until the switch, as
// one rebuilt offline (Registry.BeginRebuild) is between its two steps;
// replay_through set on its checkpoints tells the two apart. The runners
// of a replaying consumer poll (no source past its replay_through); those
// of one rebuilt offline wait for CompleteRebuild.

// replayMark is a consumer's epoch and whether it is a replay's.
type replayMark struct {
	epoch int64
	on    bool
}

// replayInProgress tells whether consumer id has a replay in progress:
// replay_through set on any of its checkpoints (read on q).
func (r *Registry) replayInProgress(ctx context.Context, q engine.Querier, id string) (bool, error) {
	rows, err := stmt.QueryCheckpointReadReplay(ctx, r.e, q, stmt.CheckpointReadReplayParams{ConsumerID: id})
	if err != nil {
		return false, err
	}
	on := false
	for rows.Next() {
		row, err := rows.Row()
		if err != nil {
			rows.Close()
			return false, err
		}
		on = on || row.ReplayThrough.Valid
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return false, r.e.Errors.Wrap(err)
	}
	return on, nil
}

// ruleState is the state the lifecycle's rules see for c (read on q):
// its state, or replaying for REBUILDING with a replay in progress.
func (r *Registry) ruleState(ctx context.Context, q engine.Querier, c Consumer) (State, error) {
	if c.State != Rebuilding {
		return c.State, nil
	}
	on, err := r.replayInProgress(ctx, q, c.ID)
	if err != nil || !on {
		return c.State, err
	}
	return replaying, nil
}

// moveTarget is the state a move of rule ru writes for consumer id:
// REBUILDING instead of running for a toReplay move while a replay is in
// progress.
func (r *Registry) moveTarget(ctx context.Context, q engine.Querier, id string, ru rule) (State, error) {
	if !ru.toReplay || ru.to != Running {
		return ru.to, nil
	}
	on, err := r.replayInProgress(ctx, q, id)
	if err != nil || !on {
		return ru.to, err
	}
	return Rebuilding, nil
}

// polls tells whether c's runners poll: it runs, or it is REBUILDING by a
// replay under its epoch. An epoch is a replay's or not for its whole life
// (a replay's begin raises it with replay_through set, its switch and an
// offline rebuild's begin raise it with replay_through cleared), so the
// answer is read once per consumer and epoch.
func (r *Registry) polls(ctx context.Context, c Consumer) (bool, error) {
	switch c.State {
	case Running:
		return true, nil
	case Rebuilding:
	default:
		return false, nil
	}
	if m, ok := r.replays.Load(c.ID); ok && m.(replayMark).epoch == c.Epoch {
		return m.(replayMark).on, nil
	}
	on, err := r.replayInProgress(ctx, r.e.DB, c.ID)
	if err != nil {
		return false, err
	}
	// Read after c: a replay seen is the one under c's epoch or a later
	// one (which fences this poll's writes); none seen is then none under
	// c's epoch or a switch since.
	r.replays.Store(c.ID, replayMark{epoch: c.Epoch, on: on})
	return on, nil
}
