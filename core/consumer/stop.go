package consumer

import (
	"context"
	"time"
)

// checkEpoch is the rebuild fence of an apply outside the database: the
// consumer must still run under the poll's epoch (a rebuild begun, a pause
// or a halt since the poll began stops it: ErrStale, the poll's other
// applies abort). Nothing can fence a handler already running; see
// docs/consumers.md for the rebuild procedure.
func (r *Runner) checkEpoch(ctx context.Context) error {
	c, err := r.reg.Get(ctx, r.c.ID)
	if err != nil {
		return err
	}
	r.mu.Lock()
	epoch := r.epoch
	r.mu.Unlock()
	if c.State != Running || c.Epoch != epoch {
		return ErrStale
	}
	return nil
}

// flushTimeout bounds the final save of a graceful stop (a few statements).
const flushTimeout = 10 * time.Second

// flush is the last save of a graceful stop: every partition read up to
// the mark has its checkpoint saved, empty stretches included, so a
// stopped consumer that applied everything shows no lag.
func (r *Runner) flush(ctx context.Context) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), flushTimeout)
	defer cancel()
	r.pollMu.Lock()
	defer r.pollMu.Unlock()
	if !r.loaded || r.c.State != Running || r.last == nil {
		return
	}
	if err := r.save(ctx, r.last, true); err != nil {
		r.opts.Logger.Warn("consumer: saving the checkpoints on stop failed; empty stretches are read again at the next start",
			"consumer", r.c.Name, "err", err)
	}
}
