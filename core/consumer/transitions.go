package consumer

import (
	"context"
	"database/sql"
	"fmt"
	"slices"

	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/stmt"
)

// move is one change of a consumer's lifecycle state.
type move string

// The moves of the lifecycle; rules says what each does.
const (
	movePause           move = "pause"
	moveHalt            move = "halt"
	moveResume          move = "resume"
	moveResumePast      move = "resume past"
	moveBeginRebuild    move = "begin rebuild"
	moveCompleteRebuild move = "complete rebuild"
	moveBeginReplay     move = "begin replay"
	moveEndReplay       move = "end replay"
)

// replaying is the state the rules see for a consumer in REBUILDING whose
// rebuild replays while it runs (replay_through set on its checkpoints, a
// projection's rebuild): its runners poll, it may be paused or halted, and
// only its switch makes it run again. It is never written: the row says
// REBUILDING.
const replaying State = "REBUILDING (replaying)"

// haltedRows is what a move does to the consumer's HALTED rows.
type haltedRows int

const (
	keepHalted    haltedRows = iota
	releaseHalted            // FAILED with a fresh budget: the poison is retried first
	skipHalted               // deleted with a skip recorded for each
)

// rule is a move's rule: the states it starts from, the state it writes
// and what else it writes in the same transaction.
type rule struct {
	from []State
	to   State
	// halted: what becomes of the consumer's HALTED rows.
	halted haltedRows
	// epoch raises the consumer's epoch (the rebuild fence).
	epoch bool
	// replay resets every checkpoint to no position under the epoch and
	// deletes the undelivered rows and skips: every message is replayed.
	replay bool
	// notHalted: a refusal is a *NotHaltedError (there is no poison
	// message to move past), not a *TransitionError.
	notHalted bool
	// namesFrom: a refusal names the state the move starts from, not the
	// state the consumer was read in.
	namesFrom bool
	// toReplay: while a replay is in progress (replay_through set) the move
	// goes back to REBUILDING instead of running: a paused or halted
	// replay resumes as a replay.
	toReplay bool
	// endsReplay clears replay_through on every checkpoint: a replay in
	// progress is abandoned (the offline rebuild supersedes it).
	endsReplay bool
}

// rules is the consumer's lifecycle: every move and its rule. The
// registry's, the operator's and the runner's state changes all go
// through apply, so they follow the same rules.
var rules = map[move]rule{
	movePause:           {from: []State{Running, replaying}, to: Paused},
	moveHalt:            {from: []State{Running, replaying}, to: Halted},
	moveResume:          {from: []State{Paused, Halted}, to: Running, halted: releaseHalted, toReplay: true},
	moveResumePast:      {from: []State{Halted}, to: Running, halted: skipHalted, notHalted: true, toReplay: true},
	moveBeginRebuild:    {from: []State{Running, Paused, Halted}, to: Rebuilding, epoch: true, replay: true, endsReplay: true},
	moveCompleteRebuild: {from: []State{Rebuilding}, to: Running, replay: true, namesFrom: true},
	// A rebuild without downtime: the epoch raised and every checkpoint
	// reset in one transaction; the consumer stays REBUILDING, its runners
	// polling (into the projection's shadow) while replay_through is set,
	// until the switch makes it run (Registry.BeginReplay, CompleteReplay).
	// A replay begun again supersedes the one in progress.
	moveBeginReplay: {from: []State{Running, Paused, Halted, replaying}, to: Rebuilding, epoch: true, replay: true},
	moveEndReplay:   {from: []State{replaying}, to: Running},
}

// step is one move of one consumer: reason for a halt; epoch is the epoch
// a replay resets the checkpoints under (a raising move sets it).
type step struct {
	move   move
	reason HaltReason
	epoch  int64
}

// refusal is the error of a move c's state does not allow.
func (s step) refusal(c Consumer, actual State) error {
	ru := rules[s.move]
	if ru.notHalted {
		return &NotHaltedError{Consumer: c.Ref(), State: actual}
	}
	from := c.State
	if ru.namesFrom {
		from = ru.from[0]
	}
	return &TransitionError{ID: c.ID, Consumer: c.Ref(), From: from, To: ru.to, Actual: actual}
}

// apply makes move s of consumer c (as read) on q, a transaction: the
// move's row effects and the compare-and-set write of the consumer's row
// (state, halt_reason and state_since together, only from the state c was
// read in). A refused move is a *TransitionError (or *NotHaltedError) and
// writes nothing the caller commits. A move that raises the epoch sets
// s.epoch to the new one.
func (r *Registry) apply(ctx context.Context, q engine.Querier, c Consumer, s *step, ch *Changes) error {
	ru := rules[s.move]
	from, err := r.ruleState(ctx, q, c)
	if err != nil {
		return err
	}
	if !slices.Contains(ru.from, from) {
		if from == replaying {
			return fmt.Errorf("%w: its rebuild replays (it runs again at the rebuild's switch)", s.refusal(c, c.State))
		}
		return s.refusal(c, c.State)
	}
	to, err := r.moveTarget(ctx, q, c.ID, ru)
	if err != nil {
		return err
	}
	// The rows are written before the consumer's row, in the runner's order
	// (undelivered rows, then its halt); a rebuild's begin raises the epoch
	// first, the fence every checkpoint write after it checks.
	if ru.epoch {
		if err := r.writeMove(ctx, q, c, s, to, ch); err != nil {
			return err
		}
		s.epoch = c.Epoch + 1
	}
	if ru.replay {
		if _, err := stmt.ExecCheckpointReset(ctx, r.e, q, stmt.CheckpointResetParams{ConsumerID: c.ID, Epoch: &s.epoch}); err != nil {
			return err
		}
		if err := r.deleteDelivery(ctx, q, c.ID); err != nil {
			return err
		}
	}
	if ru.endsReplay {
		if _, err := stmt.ExecCheckpointEndReplay(ctx, r.e, q, stmt.CheckpointEndReplayParams{ConsumerID: c.ID, Epoch: &s.epoch}); err != nil {
			return err
		}
	}
	if err := r.moveHalted(ctx, q, c, ru.halted, ch); err != nil {
		return err
	}
	if ru.epoch {
		return nil
	}
	return r.writeMove(ctx, q, c, s, to, ch)
}

// writeMove writes state to (move s's) on c's row; another writer's
// change since c was read refuses it.
func (r *Registry) writeMove(ctx context.Context, q engine.Querier, c Consumer, s *step, to State, ch *Changes) error {
	ok, err := r.writeState(ctx, q, c.ID, c.State, to, s.move, s.reason)
	if err != nil {
		return fmt.Errorf("consumer %s: %s: %w", c.label(), s.move, err)
	}
	if !ok {
		now, _ := r.get(ctx, q, c.ID)
		return s.refusal(c, now.State)
	}
	ch.State = to
	return nil
}

// moveHalted does what a move does to c's HALTED rows.
func (r *Registry) moveHalted(ctx context.Context, q engine.Querier, c Consumer, h haltedRows, ch *Changes) error {
	if h == keepHalted {
		return nil
	}
	rows, err := r.undeliveredViews(ctx, q, c)
	if err != nil {
		return err
	}
	for _, u := range rows {
		if u.Status != StatusHalted {
			continue
		}
		if h == releaseHalted {
			err = r.release(ctx, q, u, StatusFailed, ch)
		} else {
			err = r.deleteAndSkip(ctx, q, c.ID, u, ch)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// writeState is the compare-and-set write of state to (move m's) on q,
// only while the row is in from; false when it no longer was.
func (r *Registry) writeState(ctx context.Context, q engine.Querier, id string, from, to State, m move, reason HaltReason) (bool, error) {
	ru := rules[m]
	var state, halt *string
	if to != Running {
		state = (*string)(&to)
	}
	if reason != "" {
		halt = (*string)(&reason)
	}
	if ru.epoch {
		n, err := rowsChanged(stmt.ExecConsumerBeginRebuild(ctx, r.e, q, stmt.ConsumerBeginRebuildParams{
			ID: id, State: state, StateSince: r.stamp(), FromState: string(from)}))
		return n > 0, err
	}
	n, err := rowsChanged(stmt.ExecConsumerSetState(ctx, r.e, q, stmt.ConsumerSetStateParams{
		ID: id, State: state, HaltReason: halt, StateSince: r.stamp(), FromState: string(from)}))
	return n > 0, err
}

// move makes move s of consumer c (as read) in one transaction of its own
// (retried whole on a transient error within the core's bound).
func (r *Registry) move(ctx context.Context, c Consumer, s *step) (Changes, error) {
	var ch Changes
	err := r.inTx(ctx, func(tx *sql.Tx) error {
		ch = Changes{}
		return r.apply(ctx, tx, c, s, &ch)
	})
	if err == nil && rules[s.move].epoch {
		// A runner starts handler calls for up to EpochWindow on an
		// epoch it read before this commit (Runner.checkEpoch): once the
		// window passed, none starts under the old epoch.
		err = engine.Sleep(ctx, EpochWindow)
	}
	return ch, err
}
