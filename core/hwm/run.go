package hwm

import (
	"context"
	"time"
)

// pace is what a cycle leaves Run to wait for before the next one.
type pace int

const (
	// paceNudge: the cycle caught up, moved the mark or failed; the next
	// one starts at a nudge or at the poll.
	paceNudge pace = iota
	// paceHeld: a transaction still in flight held the mark below the end;
	// the next cycle starts at a nudge or after a backoff that starts at
	// heldFirst and doubles up to the poll interval, so a holder that ends
	// without a nudge (another process's, a rollback) is seen soon and a
	// long one is not polled in a tight loop.
	paceHeld
	// paceForeign: another advancer holds the lease, so a nudge cannot
	// move the mark here; the next cycle starts at the poll (which takes
	// the lease over once it lapses).
	paceForeign
)

// heldFirst is the first wait after a held cycle.
const heldFirst = 500 * time.Microsecond

// Run cycles until ctx ends, then releases the lease. Ending ctx is how an
// advancer is stopped, so Run then returns nil, also when ctx ended in the
// middle of a cycle; a failing cycle is reported through Metrics.Failed and
// Err, and Run keeps cycling.
//
// There is no tick between cycles: a nudge that finds the advancer waiting
// starts a cycle at once (no sooner than Options.Coalesce after the
// previous one started, when a floor is set). One cycle runs at a time,
// and the nudges that arrive while it runs merge into exactly one cycle
// after it. Without nudges the advancer polls every PollInterval; a cycle
// held by a transaction in flight is tried again after a short backoff
// that grows (see pace).
func (a *Advancer) Run(ctx context.Context) error {
	defer a.release()
	t := time.NewTimer(a.opts.PollInterval)
	defer t.Stop()
	var failing error // the first error of the current run of failures
	failures := 0
	var backoff time.Duration // the wait after the last held cycle; 0: not held
	for {
		started := time.Now()
		_, err := a.Cycle(ctx)
		failing, failures = a.logCycle(ctx, err, failing, failures)
		wait, nudged := a.opts.PollInterval, (<-chan struct{})(a.nudge)
		switch last := pace(a.pace.Load()); {
		case err == nil && last == paceHeld:
			backoff = min(max(2*backoff, heldFirst), a.opts.PollInterval)
			wait = backoff
		case err == nil && last == paceForeign:
			nudged, backoff = nil, 0
		default:
			backoff = 0
		}
		t.Reset(wait)
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		case <-nudged:
			if !a.floor(ctx, started) {
				return nil
			}
		}
	}
}

// floor waits until Options.Coalesce after started, when a floor is set;
// false when ctx ended meanwhile.
func (a *Advancer) floor(ctx context.Context, started time.Time) bool {
	wait := time.Until(started.Add(a.opts.Coalesce))
	if a.opts.Coalesce <= 0 || wait <= 0 {
		return true
	}
	w := time.NewTimer(wait)
	defer w.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-w.C:
		return true
	}
}

// logCycle logs the first failure of a run of failed cycles and the
// recovery after it, never every cycle (a cycle runs every PollInterval),
// and returns the run's first error and length.
func (a *Advancer) logCycle(ctx context.Context, err, failing error, failures int) (error, int) {
	switch {
	case err != nil && ctx.Err() != nil:
		return failing, failures // stopping, not failing
	case err != nil:
		if failing == nil {
			a.opts.Logger.Warn("tidemark: the high-water-mark advancer's cycle failed; it retries every poll interval, logging again when it recovers",
				"table", a.opts.PositionTable, "err", err)
			return err, 1
		}
		return failing, failures + 1
	case failing != nil:
		a.opts.Logger.Info("tidemark: the high-water-mark advancer recovered",
			"table", a.opts.PositionTable, "failed_cycles", failures, "first_err", failing)
	}
	return nil, 0
}
