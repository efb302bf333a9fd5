package consumer

import (
	"context"
	"errors"
	"fmt"
)

// RebuildStep is what an operator's rebuild step did.
type RebuildStep struct {
	Consumer Ref   `json:"consumer"`
	State    State `json:"state"`
	Epoch    int64 `json:"epoch"`
}

// BeginRebuild is the operator's first rebuild step (Registry.BeginRebuild
// by name): the consumer becomes REBUILDING under a raised epoch with every
// checkpoint reset, and no apply or checkpoint write of a poll begun before
// commits afterwards. The application's read model is emptied after it,
// then CompleteRebuild makes the consumer run again from the start.
func (o *Operator) BeginRebuild(ctx context.Context, ref Ref) (RebuildStep, error) {
	c, err := o.resolve(ctx, ref)
	if err != nil {
		return RebuildStep{}, err
	}
	epoch, err := o.r.BeginRebuild(ctx, c.ID)
	if err != nil {
		return RebuildStep{}, fmt.Errorf("consumer %s: %w", ref, err)
	}
	return RebuildStep{Consumer: ref, State: Rebuilding, Epoch: epoch}, nil
}

// CompleteRebuild is the operator's last rebuild step: a REBUILDING
// consumer's checkpoints are reset under its epoch and it runs again (every
// instance replays from the start at its next poll). Any other state is a
// *TransitionError.
func (o *Operator) CompleteRebuild(ctx context.Context, ref Ref) (RebuildStep, error) {
	c, err := o.resolve(ctx, ref)
	if err != nil {
		return RebuildStep{}, err
	}
	if _, err := o.r.move(ctx, c, &step{move: moveCompleteRebuild, epoch: c.Epoch}); err != nil {
		if errors.Is(err, ErrTransition) {
			return RebuildStep{}, err
		}
		return RebuildStep{}, fmt.Errorf("consumer %s: %w", ref, err)
	}
	return RebuildStep{Consumer: ref, State: Running, Epoch: c.Epoch}, nil
}
