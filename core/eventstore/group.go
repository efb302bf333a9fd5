package eventstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"sync/atomic"
)

// Group commit: concurrent Append calls of one Store coalesce into one
// database transaction. There is no timer: the caller that finds no batch
// running leads at once (a lone writer takes Append's own path, alone);
// callers that arrive while a batch runs queue, and when that batch's
// commit returns its leader hands the lead to the oldest queued caller,
// which takes the queue (FIFO, bounded) as the next batch. One batch runs
// at a time per Store: within a process the counter row (or the sequence)
// would serialise them anyway, and the next batch grows while one commits.

// Batch bounds. A caller over them is taken alone (the head of the queue
// is always taken, so nobody starves).
const (
	// maxBatchEvents is DefaultMaxInsertRows: one multi-row insert of the
	// widest measured size that still pays (larger statements stop gaining).
	maxBatchEvents = 500
	// maxBatchCallers bounds the version reads a batch makes under the
	// counter lock (one per distinct stream): 64 reads at ~0.1 ms on a LAN
	// keep the lock held for single milliseconds, and 64 is 4× the 16
	// writers of the bench, so a batch never waits on the bound there.
	maxBatchCallers = 64
)

// WithGroupCommit turns group commit of concurrent Append calls on or off
// (on by default). AppendTx is never grouped.
func WithGroupCommit(on bool) Option {
	return func(s *Store) {
		if on {
			s.group = &groupCommit{}
		} else {
			s.group = nil
		}
	}
}

// GroupCommitStats counts the store's group commits since it was made.
type GroupCommitStats struct {
	Batches    int64 // transactions run for queued callers, alone ones included
	Callers    int64 // callers served by those transactions
	MaxCallers int64 // the most callers one transaction served
	Queued     int   // callers waiting for a batch now
}

// GroupCommitStats returns the store's counts; zero when group commit is off.
func (s *Store) GroupCommitStats() GroupCommitStats {
	g := s.group
	if g == nil {
		return GroupCommitStats{}
	}
	g.mu.Lock()
	queued := len(g.queue)
	g.mu.Unlock()
	return GroupCommitStats{Batches: g.batches.Load(), Callers: g.callers.Load(), MaxCallers: g.maxCallers.Load(), Queued: queued}
}

// groupCommit is the queue of one Store's appends.
type groupCommit struct {
	mu      sync.Mutex
	queue   []*pending // FIFO, not yet taken into a batch
	leading bool       // a caller leads a batch (or is handed the lead)

	batches, callers, maxCallers atomic.Int64

	// fault, when set (by tests), runs in every batch of two or more
	// callers inside its transaction, right before the insert: a panic
	// there is one with the counter and the transaction held.
	fault func()
}

// pending is one queued Append.
type pending struct {
	ctx      context.Context
	streams  []Stream
	events   int
	res      Appended
	err      error
	done     chan struct{} // closed once res and err are set
	lead     chan struct{} // closed when this caller is handed the lead
	handed   bool          // under mu: lead handed (it can no longer leave)
	answered bool          // done closed (only the leader of its batch touches it)
}

// answer sets p's outcome and wakes it, once.
func (p *pending) answer(res Appended, err error) {
	if p.answered {
		return
	}
	p.res, p.err, p.answered = res, err, true
	close(p.done)
}

// ErrGroupCommitPanic is what a caller of a group commit gets when
// something in its batch panicked (a bug, a driver's panic): see
// GroupCommitPanicError.
var ErrGroupCommitPanic = errors.New("group commit panicked")

// GroupCommitPanicError answers every caller of a batch in which a panic
// was recovered. Whether the batch committed is unknown (the panic may have
// come after its COMMIT returned, as with a connection lost at commit): an
// append retried with the same event ids never stores them twice.
type GroupCommitPanicError struct {
	Value any    // what was passed to panic
	Stack []byte // the panicking goroutine's stack
}

func (e *GroupCommitPanicError) Error() string {
	return fmt.Sprintf("eventstore: group commit panicked (outcome unknown): %v", e.Value)
}

// Is makes errors.Is(err, ErrGroupCommitPanic) true.
func (e *GroupCommitPanicError) Is(target error) bool { return target == ErrGroupCommitPanic }

// Unwrap returns the panic value when it is an error.
func (e *GroupCommitPanicError) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}

// append queues streams and returns their own outcome.
func (g *groupCommit) append(ctx context.Context, s *Store, streams []Stream) (Appended, error) {
	p := newPending(ctx, streams)
	p.done, p.lead = make(chan struct{}), make(chan struct{})
	g.mu.Lock()
	g.queue = append(g.queue, p)
	if !g.leading {
		g.leading, p.handed = true, true
		g.mu.Unlock()
		g.runBatch(s)
		<-p.done
		return p.res, p.err
	}
	g.mu.Unlock()
	select {
	case <-p.done:
	case <-p.lead:
		g.runBatch(s)
		<-p.done
	case <-ctx.Done():
		if g.leave(p) {
			return Appended{}, ctx.Err()
		}
		// Taken into a batch (or handed the lead): the outcome is the batch's.
		select {
		case <-p.done:
		case <-p.lead:
			g.runBatch(s)
			<-p.done
		}
	}
	return p.res, p.err
}

// leave takes p out of the queue if no batch took it and it was not
// handed the lead, and tells whether it did.
func (g *groupCommit) leave(p *pending) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if p.handed {
		return false
	}
	for i, q := range g.queue {
		if q == p {
			g.queue = append(g.queue[:i], g.queue[i+1:]...)
			return true
		}
	}
	return false
}

// runBatch takes the head of the queue as a batch, runs it, and hands the
// lead on to the next queued caller.
func (g *groupCommit) runBatch(s *Store) {
	batch := g.take()
	if len(batch) > 0 {
		g.batches.Add(1)
		g.callers.Add(int64(len(batch)))
		for n := int64(len(batch)); ; {
			m := g.maxCallers.Load()
			if n <= m || g.maxCallers.CompareAndSwap(m, n) {
				break
			}
		}
		s.commitGroup(batch)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.queue) == 0 {
		g.leading = false
		return
	}
	next := g.queue[0]
	next.handed = true
	close(next.lead)
}

// take removes the batch from the head of the queue: FIFO, within the
// bounds, the head always. Callers whose ctx ended are answered and dropped.
func (g *groupCommit) take() []*pending {
	g.mu.Lock()
	defer g.mu.Unlock()
	var batch []*pending
	events, n := 0, 0
	for n < len(g.queue) {
		p := g.queue[n]
		if p.ctx.Err() != nil {
			p.answer(Appended{}, p.ctx.Err())
			n++
			continue
		}
		if len(batch) > 0 && (len(batch) >= maxBatchCallers || events+p.events > maxBatchEvents) {
			break
		}
		batch = append(batch, p)
		events += p.events
		n++
	}
	g.queue = append(g.queue[:0], g.queue[n:]...)
	return batch
}

// commitGroup runs a batch and answers each of its callers. A caller alone
// is a lone append with its own ctx (what it would be without group
// commit); a batch runs to its end whatever its callers' ctx do.
//
// A panic is recovered here: without it the leader's goroutine unwinds with
// the lead held, and every queued caller (and every later one) waits
// forever. Each caller of the batch not yet answered gets a
// *GroupCommitPanicError, and runBatch hands the lead on. A transaction the
// panic leaves open is rolled back by try's defers.
func (s *Store) commitGroup(batch []*pending) {
	defer func() {
		if v := recover(); v != nil {
			perr := &GroupCommitPanicError{Value: v, Stack: debug.Stack()}
			slog.Error("eventstore: group commit panicked; its callers get ErrGroupCommitPanic",
				"callers", len(batch), "panic", v, "stack", string(perr.Stack))
			for _, p := range batch {
				p.answer(Appended{}, perr)
			}
		}
	}()
	ctx := batch[0].ctx
	if len(batch) > 1 {
		ctx = context.WithoutCancel(ctx)
	}
	s.run(ctx, batch, false)
	for _, p := range batch {
		p.answer(p.res, p.err)
	}
}
