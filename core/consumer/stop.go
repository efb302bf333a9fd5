package consumer

import (
	"context"
	"time"
)

// EpochWindow is how long a runner trusts a read of the consumer row that
// found it running under the poll's epoch, counted from when the read was
// sent: handler calls outside the database start within it without reading
// the row again. A move that raises the epoch returns only after the
// window (Registry.move), so no handler call starts under the old epoch
// once BeginRebuild returned: reading the row before every call gave the
// same guarantee at one statement per message.
const EpochWindow = 50 * time.Millisecond

// checkEpoch is the rebuild fence of an apply outside the database: the
// consumer must still run under the poll's epoch (or be REBUILDING under
// it: the poll is the epoch's replay, as only an epoch's replay polls in
// that state; a rebuild begun, a pause
// or a halt since the poll began stops it: ErrStale, the poll's other
// applies abort), as read within EpochWindow. Nothing can fence a handler
// already running; see docs/consumers.md for the rebuild procedure.
func (r *Runner) checkEpoch(ctx context.Context) error {
	r.mu.Lock()
	epoch, fresh := r.epoch, r.epochEpoch == r.epoch && time.Since(r.epochSent) < EpochWindow
	r.mu.Unlock()
	if fresh {
		return nil
	}
	sent := time.Now()
	c, err := r.reg.Get(ctx, r.c.ID)
	if err != nil {
		return err
	}
	if (c.State != Running && c.State != Rebuilding) || c.Epoch != epoch {
		return ErrStale
	}
	r.mu.Lock()
	if sent.After(r.epochSent) {
		r.epochSent, r.epochEpoch = sent, epoch
	}
	r.mu.Unlock()
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
	if !r.loaded || (r.c.State != Running && r.c.State != Rebuilding) || r.last == nil {
		return
	}
	if err := r.save(ctx, r.last, true); err != nil {
		r.opts.Logger.Warn("consumer: saving the checkpoints on stop failed; empty stretches are read again at the next start",
			"consumer", r.c.Name, "err", err)
	}
}
