package consumer

import (
	"context"
	"database/sql"
	"errors"
	"sync"
	"time"

	"github.com/tidemarkdb/tidemark/core/engine"
)

// errChunkNotMoved: a chunk's checkpoint write moved nothing (another
// writer applied part of it, or a rebuild fenced the poll off); its
// messages are applied one by one, which tells which.
var errChunkNotMoved = errors.New("consumer: the chunk's checkpoint write moved nothing")

// applyChunked is apply for a Transactional runner with TxBatch above 1:
// each partition's messages go to one worker, in position order, and runs
// of up to TxBatch of them that need nothing but their handler are applied
// in one transaction with one checkpoint write, committed once. A message
// that is skipped, held behind its key or already recorded is delivered on
// its own, as is every message of a chunk that failed: the chunk rolled
// back, so each is applied (or recorded as undelivered) as apply would.
func (r *Runner) applyChunked(ctx context.Context, ps *pollState, batch []Message) int {
	type run struct{ msgs []Message }
	byPart := map[partKey]*run{}
	var runs []*run
	for _, m := range batch {
		k := partKey{m.Source, m.Partition}
		if byPart[k] == nil {
			byPart[k] = &run{}
			runs = append(runs, byPart[k])
		}
		byPart[k].msgs = append(byPart[k].msgs, m)
	}
	work := make(chan *run, len(runs))
	for _, p := range runs {
		work <- p
	}
	close(work)
	var wg sync.WaitGroup
	var mu sync.Mutex
	applied := 0
	for range min(r.opts.Workers, len(runs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range work {
				n := r.applyPartition(ctx, ps, p.msgs)
				mu.Lock()
				applied += n
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return applied
}

// applyPartition applies one partition's messages of the poll, in order,
// in chunks where it can; it returns how many the handler applied.
func (r *Runner) applyPartition(ctx context.Context, ps *pollState, msgs []Message) int {
	applied := 0
	for i := 0; i < len(msgs); {
		if r.isStale() || ps.isHalted() {
			for _, m := range msgs[i:] {
				r.abort(m)
			}
			return applied
		}
		j := i
		for j < len(msgs) && j-i < r.opts.TxBatch && r.plain(msgs[j]) {
			j++
		}
		if j-i > 1 && r.applyChunk(ctx, msgs[i:j]) == nil {
			applied += j - i
			i = j
			continue
		}
		// One message on its own, or a failed chunk's one by one.
		for _, m := range msgs[i:max(j, i+1)] {
			if r.isStale() || ps.isHalted() {
				r.abort(m)
				continue
			}
			if r.deliver(ctx, ps, m) {
				applied++
			}
		}
		i = max(j, i+1)
	}
	return applied
}

// plain tells whether m needs nothing but its handler: not skipped, not
// held behind an undelivered message of its key, not recorded itself.
func (r *Runner) plain(m Message) bool {
	skip, status, recorded := r.admit(m)
	return !skip && status == "" && !recorded
}

// applyChunk applies chunk (consecutive messages of one partition) in one
// transaction, retrying transient errors as an apply does. nil: every
// message committed with the checkpoint past the last; any other outcome
// rolled it all back.
func (r *Runner) applyChunk(ctx context.Context, chunk []Message) error {
	start := time.Now()
	if r.reg.e.Cat.Locks.SerializesWriters {
		if err := r.awaitPredecessors(ctx, chunk[0], 0); err != nil {
			return err
		}
	}
	err := r.retryTransient(ctx, chunk[0].Source, func() error {
		// One writer at a time (SQLite): chunks of this process queue
		// here, with its appends and mark writes, not in the database's
		// busy handler, which sleeps. Nothing in a chunk waits for another
		// holder: its predecessors were applied before it.
		defer r.reg.e.LockWriter()()
		return r.chunkInTxOnce(ctx, chunk)
	})
	if err != nil {
		return err
	}
	per := time.Since(start) / time.Duration(len(chunk))
	for _, m := range chunk {
		r.opts.Metrics.Applied(r.c, m.Source, per)
	}
	return nil
}

func (r *Runner) chunkInTxOnce(ctx context.Context, chunk []Message) error {
	e := r.reg.e
	first, last := chunk[0], chunk[len(chunk)-1]
	tx, err := e.BeginTx(ctx, engine.OpAppend)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }() // no-op after Commit
	if err := r.handleChunk(ctx, tx, chunk); err != nil {
		return err
	}
	if err := r.awaitPredecessors(ctx, first, predecessorWait); err != nil {
		return err
	}
	if err := r.checkLease(ctx, tx, first.Partition, first.Generation); err != nil {
		return err
	}
	target := r.targetOver(first, last)
	moved, err := r.reg.advanceOver(ctx, tx, r.c.ID, first.Source, first.Partition, target, first.Position, r.epoch)
	if err != nil {
		return err
	}
	if !moved {
		return errChunkNotMoved
	}
	if err := e.Errors.Wrap(tx.Commit()); err != nil {
		return err
	}
	for _, m := range chunk {
		r.done(m, target)
	}
	return nil
}

// handleChunk runs chunk's handlers in tx: one call for the chunk when its
// source's route is OnChunk, else a call per message.
func (r *Runner) handleChunk(ctx context.Context, tx *sql.Tx, chunk []Message) error {
	ms := make([]Message, len(chunk)) // the poll's messages stay as they were read
	for i, m := range chunk {
		if err := r.startApply(m); err != nil {
			return err
		}
		m.Epoch = r.epoch
		ms[i] = m
	}
	if h := r.chunks[ms[0].Source]; h != nil {
		return h(ctx, tx, ms)
	}
	for _, m := range ms {
		if err := r.handlers[m.Source](ctx, tx, m); err != nil {
			return err
		}
	}
	return nil
}

// targetOver is the checkpoint a transaction applying first to last (one
// message, or a chunk) may write: every apply up to it committed, counting
// its own as committed.
func (r *Runner) targetOver(first, last Message) int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.parts[partKey{first.Source, first.Partition}]
	c := st.read
	for pos := range st.pending {
		if pos < first.Position || pos > last.Position {
			c = min(c, pos-1)
		}
	}
	return c
}
