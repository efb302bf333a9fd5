package consumer

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tidemarkdb/tidemark/core/sqlerr"
)

func transient(err error) bool { return sqlerr.IsTransient(err) }

// pollState is what lives for one poll only, created at its start and
// passed down read → apply → save and the recording of failures; the
// poll's workers write to it concurrently, under mu. What lives across
// polls (partitions, epoch, the undelivered rows and skips) stays on the
// Runner.
type pollState struct {
	mu sync.Mutex
	// leases: the runner holds partition leases, and owned are the ones
	// this poll runs under, by partition; without them it runs every
	// partition.
	leases  bool
	owned   map[int]int64
	marks   map[string]int64 // each source's mark as this poll read it
	failure error            // a database error recording a failure: ends the poll
	halted  atomic.Bool      // the runner halted the consumer in this poll
}

// newPoll begins a poll's state with a snapshot of the leases this
// instance holds. A partition that entered (or came back under a new
// generation) since the last poll may have been advanced by another
// instance: the checkpoints are read again. One that left has nothing in
// flight between polls; it is neither read nor saved until it comes back.
func (r *Runner) newPoll() *pollState {
	ps := &pollState{leases: r.member != nil, marks: map[string]int64{}}
	prev := r.last
	r.last = ps
	if r.member == nil {
		return ps
	}
	ps.owned = r.member.Owned()
	var before map[int]int64
	if prev != nil {
		prev.mu.Lock()
		before = prev.owned
		prev.mu.Unlock()
	}
	for p, g := range ps.owned {
		if old, ok := before[p]; !ok || old != g {
			r.mu.Lock()
			r.loaded = false
			r.mu.Unlock()
		}
	}
	return ps
}

// leased reports whether this poll runs partition p (always without
// leases) and the generation it holds it by.
func (ps *pollState) leased(p int) (int64, bool) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if !ps.leases {
		return 0, true
	}
	g, ok := ps.owned[p]
	return g, ok
}

// dropLease leaves partition p out of the rest of the poll (its lease
// went).
func (ps *pollState) dropLease(p int) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	delete(ps.owned, p)
}

// fail keeps the poll's first database error recording a failure.
func (ps *pollState) fail(err error) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if ps.failure == nil {
		ps.failure = err
	}
}

// err is the error that ends the poll (nil: none).
func (ps *pollState) err() error {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	return ps.failure
}

func (ps *pollState) halt() { ps.halted.Store(true) }

func (ps *pollState) isHalted() bool { return ps.halted.Load() }

func (ps *pollState) setMark(source string, mark int64) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	ps.marks[source] = mark
}

// mark is source's mark as this poll read it (false: not read).
func (ps *pollState) mark(source string) (int64, bool) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	m, ok := ps.marks[source]
	return m, ok
}

// poll is one cycle: read the row (state, epoch; a consumer runs, or
// replays a rebuild in REBUILDING), reload checkpoints when
// the epoch moved or the consumer just came back, read the undelivered
// rows and skips, retry the heads that are due, read a page of every
// partition up to its mark, deliver it through the worker pool, save.
func (r *Runner) poll(ctx context.Context) (int, bool, error) {
	r.pollMu.Lock()
	defer r.pollMu.Unlock()
	sent := time.Now()
	c, err := r.reg.Get(ctx, r.c.ID)
	if err != nil {
		return 0, false, err
	}
	runs, err := r.reg.polls(ctx, c)
	if err != nil {
		return 0, false, err
	}
	if !runs {
		if r.c.State != c.State {
			r.logState("consumer not running", "state", c.State, "halt_reason", c.HaltReason)
		}
		r.c, r.loaded = c, false // reload when it runs again
		return 0, false, nil
	}
	r.c = c
	ps := r.newPoll()
	if !r.loaded || r.stale.Load() || c.Epoch != r.epoch {
		if err := r.load(ctx, c.Epoch); err != nil {
			return 0, false, err
		}
	}
	r.mu.Lock()
	if r.epoch == c.Epoch && sent.After(r.epochSent) {
		r.epochSent, r.epochEpoch = sent, c.Epoch // the row read is the first fence read
	}
	r.mu.Unlock()
	if err := r.loadDelivery(ctx); err != nil {
		return 0, false, err
	}
	// Applies in flight finish even when ctx ends (graceful stop); their
	// checkpoints are saved below on the same detached context.
	work := context.WithoutCancel(ctx)
	n := r.retryHeads(work, ps)
	var batch []Message
	more := false
	if !ps.isHalted() && ps.err() == nil && ctx.Err() == nil {
		if batch, more, err = r.read(ctx, ps); err != nil {
			// read put back the partitions it had read: the runner's
			// state stays what the last complete poll left (a stop's
			// flush still saves it).
			if herr := r.missingHistory(work, ps, err); herr != errNotMissing {
				// A halt (or its failure): reload when running again,
				// from the checkpoints and the incomplete-history marks.
				r.loaded = false
				return n, false, herr
			}
			return n, false, err
		}
	}
	n += r.apply(work, ps, batch)
	if err := r.save(work, ps, false); err != nil {
		return n, more, err
	}
	r.reportLag(ps)
	if ferr := ps.err(); ferr != nil || ps.isHalted() {
		r.loaded = false
		return n, false, ferr
	}
	if r.opts.AfterPoll != nil {
		if err := r.opts.AfterPoll(work, r.epoch); err != nil {
			return n, false, err
		}
	}
	return n, more && !r.stale.Load(), nil
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
	rp, err := r.reg.ReplayOf(ctx, r.reg.e.DB, r.c.ID)
	if err != nil {
		return err
	}
	now := r.opts.Now()
	parts := map[partKey]*partState{}
	for _, cp := range cps {
		k := partKey{cp.Source, cp.Partition}
		parts[k] = &partState{saved: cp.Position, read: max(cp.Position, marks[k]), lastSave: now}
		if rp.Replaying && rp.Epoch == epoch {
			parts[k].through = rp.Through[cp.Source]
		}
	}
	for _, s := range r.sources {
		for p := range s.Partitions() {
			if parts[partKey{s.Name(), p}] == nil {
				return fmt.Errorf("consumer %s: no checkpoint for %s/%d (unsubscribed while running?)", r.c.label(), s.Name(), p)
			}
		}
	}
	r.mu.Lock()
	r.parts, r.epoch, r.loaded = parts, epoch, true
	r.stale.Store(false)
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
