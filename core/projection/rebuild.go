package projection

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tidemarkdb/tidemark/core/consumer"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/eventstore"
	"github.com/tidemarkdb/tidemark/core/topic"
)

// ErrReadOnly: a rebuild or an accept asked of a store on a read-only
// engine.
var ErrReadOnly = errors.New("projection: the engine is read-only")

// ErrNeverRun: a rebuild asked of a projection whose consumer has no
// checkpoint yet (it never ran): there is nothing to replay.
var ErrNeverRun = errors.New("projection: its consumer never ran")

// rebuildWait is how often Rebuild looks whether the replay caught up.
const rebuildWait = 50 * time.Millisecond

// target is where an apply writes: the live query table, or the shadow
// while its consumer's epoch is a rebuild's replay.
type target struct {
	st     *statements
	shadow bool
	epoch  int64 // the READ_MODEL_EPOCHS epoch a new read model gets
}

// targetOf is the target of an apply under the consumer's epoch: the
// shadow while that epoch is a replay. Each epoch's answer is read once
// (an epoch is a replay or not for its whole life); an apply under an
// epoch older than the consumer's is fenced off at its checkpoint write,
// so where it writes does not matter.
func (s *Store[S]) targetOf(ctx context.Context, q engine.Querier, epoch int64) (target, error) {
	live := target{st: &s.stmts}
	shadow, err := s.replaying(ctx, q, epoch)
	if err != nil || !shadow {
		return live, err
	}
	return target{st: &s.shadowStmts, shadow: true, epoch: epoch}, nil
}

// replaying tells whether epoch is a replay of the store's consumer.
func (s *Store[S]) replaying(ctx context.Context, q engine.Querier, epoch int64) (bool, error) {
	if s.consumerID == "" {
		return false, nil
	}
	s.mu.Lock()
	shadow, ok := s.modes[epoch]
	s.mu.Unlock()
	if ok {
		return shadow, nil
	}
	rp, err := s.reg.ReplayOf(ctx, q, s.consumerID)
	if err != nil {
		return false, fmt.Errorf("projection %q: reading its rebuild: %w", s.p.name, err)
	}
	if rp.Epoch != epoch {
		return false, nil
	}
	s.mu.Lock()
	s.modes[epoch] = rp.Replaying
	s.mu.Unlock()
	return rp.Replaying, nil
}

// Rebuild rebuilds every read model without downtime: BeginRebuild, then
// it waits until the replay (run by the projection's runners, each with
// Options) caught up with every source's replay_through and switches
// (CompleteRebuild; a runner's poll may switch it first). Readers see the
// old read models until the switch, the new ones after it. ctx bounds the
// wait; the rebuild goes on without it.
func (s *Store[S]) Rebuild(ctx context.Context) error {
	epoch, err := s.BeginRebuild(ctx)
	if err != nil {
		return err
	}
	return s.AwaitRebuild(ctx, epoch)
}

// RebuildHaltedError reports a rebuild whose consumer halted during the
// replay (MISSING_HISTORY: a source's history no longer starts at the
// beginning; APPLY_ERROR): nothing was switched, readers keep the old
// read models, and the replay goes on once the consumer is resumed.
type RebuildHaltedError struct {
	Projection string
	Reason     consumer.HaltReason
}

func (e *RebuildHaltedError) Error() string {
	return fmt.Sprintf("projection %q: its rebuild halted with %s before the switch; the old read models stay", e.Projection, e.Reason)
}

// AwaitRebuild waits until the replay of epoch is switched, switching it
// itself once it caught up (CompleteRebuild). A consumer halted meanwhile
// is a *RebuildHaltedError; ctx bounds the wait.
func (s *Store[S]) AwaitRebuild(ctx context.Context, epoch int64) error {
	tick := time.NewTicker(rebuildWait)
	defer tick.Stop()
	for {
		done, err := s.CompleteRebuild(ctx, epoch)
		if err != nil || done {
			return err
		}
		c, err := s.reg.Get(ctx, s.consumerID)
		if err != nil {
			return err
		}
		if c.State == consumer.Halted {
			return &RebuildHaltedError{Projection: s.p.name, Reason: c.HaltReason}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// BeginRebuild begins a rebuild: the shadow table is made ready and, in
// one transaction, emptied while the consumer's epoch is raised (a poll
// begun before is fenced off), its checkpoints reset and each source's
// replay_through set to the source's committed end. The projection's
// runners then replay every source into the shadow. It returns the
// replay's epoch.
func (s *Store[S]) BeginRebuild(ctx context.Context) (int64, error) {
	if s.e.ReadOnly() || s.consumerID == "" {
		return 0, fmt.Errorf("projection %q: rebuild: %w", s.p.name, ErrReadOnly)
	}
	// The switch copies the shadow's columns into the live table: the
	// shadow must have them (ensureShadow checks or makes it).
	if err := s.ensureShadow(ctx); err != nil {
		return 0, err
	}
	through, err := replayThrough(ctx, s.e, s.reg, s.consumerID)
	if err != nil {
		return 0, fmt.Errorf("projection %q: rebuild: %w", s.p.name, err)
	}
	return s.reg.BeginReplay(ctx, s.consumerID, through, func(ctx context.Context, tx *sql.Tx, _ int64) error {
		_, err := s.swap.clearShadow.exec(ctx, s.e, tx, nil)
		return err
	})
}

// CompleteRebuild switches the replay of epoch once it caught up: in one
// transaction the consumer's epoch is raised again (applies of the replay
// still in flight are fenced off), the query table is replaced by the
// shadow (read models the replay did not re-create are gone with it), the
// epoch rows of those are deleted and the declaration's fingerprint is
// stored. true once the switch is done (by this call or another);
// false while the replay has not caught up.
func (s *Store[S]) CompleteRebuild(ctx context.Context, epoch int64) (bool, error) {
	if s.consumerID == "" {
		return false, fmt.Errorf("projection %q: rebuild: %w", s.p.name, ErrReadOnly)
	}
	err := s.reg.CompleteReplay(ctx, s.consumerID, epoch, func(ctx context.Context, tx *sql.Tx, next int64) error {
		for _, st := range []statement{s.swap.clearLive, s.swap.fill, s.swap.clearShadow} {
			if _, err := st.exec(ctx, s.e, tx, nil); err != nil {
				return err
			}
		}
		if _, err := s.swap.dropStale.exec(ctx, s.e, tx, map[string]any{"projection": s.p.name, "epoch": epoch}); err != nil {
			return err
		}
		stored, err := s.reg.Fingerprint(ctx, tx, s.consumerID)
		if err != nil {
			return err
		}
		return s.reg.SetFingerprint(ctx, tx, s.consumerID, nextFingerprint(stored, s.Fingerprint()))
	})
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, consumer.ErrNotCaughtUp), errors.Is(err, consumer.ErrTransition):
		return false, nil // not caught up, or paused or halted meanwhile
	case errors.Is(err, consumer.ErrNotReplaying):
		rp, rerr := s.reg.ReplayOf(ctx, s.e.DB, s.consumerID)
		switch {
		case rerr != nil:
		case !rp.Replaying && rp.Epoch == epoch+1 && !s.rebuiltOffline(ctx):
			return true, nil // switched by another
		case rp.Replaying && rp.Epoch == epoch:
			return false, nil // another switch not committed yet (its write refused this one's)
		}
	}
	return false, fmt.Errorf("projection %q: completing its rebuild: %w", s.p.name, err)
}

// rebuiltOffline tells whether the consumer is REBUILDING without a
// replay: an offline rebuild's begin superseded the replay (a switch
// leaves it running).
func (s *Store[S]) rebuiltOffline(ctx context.Context) bool {
	c, err := s.reg.Get(ctx, s.consumerID)
	return err == nil && c.State == consumer.Rebuilding
}

// afterPoll switches a replay from the runner once it caught up; it reads
// nothing while the consumer's epoch is not a replay's.
func (s *Store[S]) afterPoll(ctx context.Context, epoch int64) error {
	shadow, err := s.replaying(ctx, s.e.DB, epoch)
	if err != nil || !shadow {
		return err
	}
	_, err = s.CompleteRebuild(ctx, epoch)
	if errors.Is(err, consumer.ErrNotReplaying) {
		return nil // another rebuild began since this poll: the next one reloads
	}
	return err
}

// replayThrough is each source's committed end, for every source the
// consumer has checkpoints on.
func replayThrough(ctx context.Context, e *engine.Engine, reg *consumer.Registry, id string) (map[string]int64, error) {
	cps, err := reg.Checkpoints(ctx, id)
	if err != nil {
		return nil, err
	}
	if len(cps) == 0 {
		return nil, ErrNeverRun
	}
	out := map[string]int64{}
	for _, cp := range cps {
		if _, ok := out[cp.Source]; ok {
			continue
		}
		src, err := sourceNamed(ctx, e, cp.Source)
		if err != nil {
			return nil, err
		}
		if out[cp.Source], err = src.Mark(ctx); err != nil {
			return nil, fmt.Errorf("the committed end of %s: %w", cp.Source, err)
		}
	}
	return out, nil
}

// sourceNamed is the source a projection's checkpoint names: the event
// store or a read-model topic.
func sourceNamed(ctx context.Context, e *engine.Engine, name string) (consumer.Source, error) {
	if upstream, ok := strings.CutPrefix(name, topic.ReadModelSourcePrefix); ok {
		t, err := topic.OpenReadModel(ctx, e, upstream)
		if err != nil {
			return nil, err
		}
		return consumer.ReadModelTopic(t, nil), nil
	}
	src := consumer.EventStore(eventstore.New(e, nil), nil)
	if src.Name() != name {
		return nil, fmt.Errorf("source %s is neither the event store nor a read-model topic", name)
	}
	return src, nil
}
