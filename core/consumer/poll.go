package consumer

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tidemarkdb/tidemark/core/sqlerr"
)

func transient(err error) bool { return sqlerr.IsTransient(err) }

// poll is one cycle: read the row (state, epoch), reload checkpoints when
// the epoch moved or the consumer just came back, read the undelivered
// rows and skips, retry the heads that are due, read a page of every
// partition up to its mark, deliver it through the worker pool, save.
func (r *Runner) poll(ctx context.Context) (int, bool, error) {
	r.pollMu.Lock()
	defer r.pollMu.Unlock()
	c, err := r.reg.Get(ctx, r.c.ID)
	if err != nil {
		return 0, false, err
	}
	if c.State != Running {
		if r.c.State != c.State {
			r.logState("consumer not running", "state", c.State, "halt_reason", c.HaltReason)
		}
		r.c, r.loaded = c, false // reload when it runs again
		return 0, false, nil
	}
	r.c = c
	r.refreshLeases()
	if !r.loaded || r.stale || c.Epoch != r.epoch {
		if err := r.load(ctx, c.Epoch); err != nil {
			return 0, false, err
		}
	}
	r.halted, r.failure, r.marks = false, nil, map[string]int64{}
	if err := r.loadDelivery(ctx); err != nil {
		return 0, false, err
	}
	// Applies in flight finish even when ctx ends (graceful stop); their
	// checkpoints are saved below on the same detached context.
	work := context.WithoutCancel(ctx)
	n := r.retryHeads(work)
	var batch []Message
	more := false
	if !r.halted && r.failure == nil && ctx.Err() == nil {
		if batch, more, err = r.read(ctx); err != nil {
			// read put back the partitions it had read: the runner's
			// state stays what the last complete poll left (a stop's
			// flush still saves it).
			if herr := r.missingHistory(work, err); herr != errNotMissing {
				// A halt (or its failure): reload when running again,
				// from the checkpoints and the incomplete-history marks.
				r.loaded = false
				return n, false, herr
			}
			return n, false, err
		}
	}
	n += r.apply(work, batch)
	if err := r.save(work, false); err != nil {
		return n, more, err
	}
	r.reportLag()
	if r.failure != nil || r.halted {
		r.loaded = false
		return n, false, r.failure
	}
	return n, more && !r.stale, nil
}

// load reads the checkpoints: every partition resumes after its own, or
// after its incomplete-history mark when that is higher (a resume past
// missing history goes on after the gap).
func (r *Runner) load(ctx context.Context, epoch int64) error {
	cps, err := r.reg.Checkpoints(ctx, r.c.ID)
	if err != nil {
		return err
	}
	marks, err := r.reg.incompleteMarks(ctx, r.c.ID)
	if err != nil {
		return err
	}
	now := r.opts.Now()
	parts := map[partKey]*partState{}
	for _, cp := range cps {
		k := partKey{cp.Source, cp.Partition}
		parts[k] = &partState{saved: cp.Position, read: max(cp.Position, marks[k]), lastSave: now}
	}
	for _, s := range r.sources {
		for p := range s.Partitions() {
			if parts[partKey{s.Name(), p}] == nil {
				return fmt.Errorf("consumer %s: no checkpoint for %s/%d (unsubscribed while running?)", r.c.label(), s.Name(), p)
			}
		}
	}
	r.mu.Lock()
	r.parts, r.epoch, r.loaded, r.stale = parts, epoch, true, false
	r.mu.Unlock()
	return nil
}

// predecessorWait bounds how long a Transactional apply holds its
// transaction open waiting for earlier positions of its partition to
// commit: past it the apply rolls back and waits without a transaction,
// so an earlier apply blocked on a row lock this one holds (two keys
// writing one row) can finish. One second is far above a typical apply
// (milliseconds) and far below the engines' lock timeouts (PostgreSQL
// none, MariaDB 50 s, H2 and HSQLDB several seconds).
const predecessorWait = time.Second

var errWaited = errors.New("earlier applies still running")
