package consumer

import (
	"context"
	"math"
)

// read takes a page of every partition of every source (see readSource):
// below the mark the page's own transaction reads when one range read
// serves every partition, else below the mark read once per source for
// this poll (no further than the source's replay_through while a rebuild
// replays), in one statement for all partitions when the source can
// (RangeReader) and it pays (readsAsOne), else one read per partition.
func (r *Runner) read(ctx context.Context, ps *pollState) (batch []Message, more bool, err error) {
	// A failed read drops its batch: the partitions it read go back to
	// where they were, so nothing read and not applied counts as read, and
	// the rest of the state stays loaded (a stop's flush still saves it).
	var undo readUndo
	defer func() {
		if err != nil {
			undo.restore()
		}
	}()
	for _, s := range r.sources {
		msgs, full, err := r.readSource(ctx, ps, s, &undo)
		if err != nil {
			return nil, false, &readError{source: s, err: err}
		}
		batch, more = append(batch, msgs...), more || full
	}
	return batch, more, nil
}

// unbounded is the mark of a range read that reads the mark itself.
const unbounded = int64(math.MaxInt64)

// readSource reads s for this poll. A range read that serves every
// partition outside a rebuild's replay reads no mark of its own first: the
// page is read below the mark its transaction reads (one statement less
// per poll, and the mark and page come from one server). Otherwise the
// poll reads s's mark, then a range read or a read per partition below it.
func (r *Runner) readSource(ctx context.Context, ps *pollState, s Source, undo *readUndo) ([]Message, bool, error) {
	rr, ranged := rangeReader(s)
	if ranged && r.c.State != Rebuilding && r.readsAsOne(ps, s, unbounded) {
		msgs, full, mark, err := r.readRange(ctx, ps, s, rr, unbounded, undo)
		if err == nil {
			ps.setMark(s.Name(), mark)
		}
		return msgs, full, err
	}
	mark, err := s.Mark(ctx)
	if err != nil {
		return nil, false, err
	}
	ps.setMark(s.Name(), mark)
	mark = r.replayBound(s, mark)
	if ranged && r.readsAsOne(ps, s, mark) {
		msgs, full, _, err := r.readRange(ctx, ps, s, rr, mark, undo)
		return msgs, full, err
	}
	return r.readPartitions(ctx, ps, s, mark, undo)
}

// rangeReader is s as a RangeReader, unless it says it reads per partition.
func rangeReader(s Source) (RangeReader, bool) {
	rr, ok := s.(RangeReader)
	if o, says := s.(interface{ RangeReads() bool }); ok && says && !o.RangeReads() {
		return nil, false
	}
	return rr, ok
}

// readPartitions reads a page of every partition of s this runner holds,
// one read each.
func (r *Runner) readPartitions(ctx context.Context, ps *pollState, s Source, mark int64, undo *readUndo) ([]Message, bool, error) {
	var batch []Message
	more := false
	for p := range s.Partitions() {
		st := r.parts[partKey{s.Name(), p}]
		gen, mine := ps.leased(p)
		if st.read >= mark || !mine {
			continue
		}
		msgs, below, err := readMarked(ctx, s, p, st.read, mark, r.opts.PageSize)
		if err != nil {
			return nil, false, err
		}
		for i := range msgs {
			msgs[i].Generation = gen
		}
		undo.begin(st, msgs)
		batch = append(batch, msgs...)
		if len(msgs) < r.opts.PageSize {
			// Nothing else committed up to the mark the page was read
			// below (a server behind the poll's mark reads less).
			st.read = max(st.read, below)
		} else {
			st.read, more = msgs[len(msgs)-1].Position, true
		}
	}
	return batch, more, nil
}

// readUndo is what a read changed: each partition it began, with its read
// position before.
type readUndo []struct {
	st   *partState
	read int64
}

// begin begins msgs in st (partState.begin), recording st's read position.
func (u *readUndo) begin(st *partState, msgs []Message) {
	*u = append(*u, struct {
		st   *partState
		read int64
	}{st, st.read})
	st.begin(msgs)
}

// restore puts every partition begun back at its read position, with
// nothing pending.
func (u readUndo) restore() {
	for _, x := range u {
		x.st.read, x.st.pending, x.st.aborted = x.read, map[int64]bool{}, map[int64]bool{}
	}
}

// begin makes msgs the partition's pending messages of this poll.
func (p *partState) begin(msgs []Message) {
	p.pending, p.aborted, p.changed = make(map[int64]bool, len(msgs)), map[int64]bool{}, nil
	for _, m := range msgs {
		p.pending[m.Position] = true
	}
}

// readsAsOne tells whether one range read of s serves this poll: the
// runner holds every partition (a range read of a pool's shared source
// would fetch the other instances' messages only to drop them) and the
// partitions with something to read are within one page of each other
// (what the range read fetches again below a partition's read position, to
// drop it, is then less than one page).
func (r *Runner) readsAsOne(ps *pollState, s Source, mark int64) bool {
	lo, hi := int64(-1), int64(-1)
	for p := range s.Partitions() {
		if _, mine := ps.leased(p); !mine {
			return false
		}
		st := r.parts[partKey{s.Name(), p}]
		if st.read >= mark {
			continue
		}
		if lo < 0 || st.read < lo {
			lo = st.read
		}
		hi = max(hi, st.read)
	}
	return lo >= 0 && hi-lo <= int64(r.rangeLimit(s))
}

// rangeLimit is the most messages a range read of s fetches: a page per
// partition, the most the per-partition reads would have fetched.
func (r *Runner) rangeLimit(s Source) int { return r.opts.PageSize * s.Partitions() }

// readRange reads every partition of s in one statement from the lowest
// read position, and hands each partition the messages above its own read
// position. The range covers every partition up to where it ended, so
// every partition's read position moves there. A poll reads at most
// PageSize × partitions messages in all, as the per-partition reads, but
// without Transactional one partition may get more than PageSize of them:
// cutting the page at a partition's PageSize-th message would drop and read
// again what a busy partition's burst brought. A Transactional runner cuts
// there all the same.
//
// Besides the batch and whether more is left, it returns the mark the
// page was read below (the source's mark as its read saw it).
func (r *Runner) readRange(ctx context.Context, ps *pollState, s Source, rr RangeReader, mark int64, undo *readUndo) ([]Message, bool, int64, error) {
	after := int64(-1)
	for p := range s.Partitions() {
		if st := r.parts[partKey{s.Name(), p}]; st.read < mark && (after < 0 || st.read < after) {
			after = st.read
		}
	}
	limit := r.rangeLimit(s)
	msgs, through, below, more := r.takeAhead(ctx, s.Name(), after, mark, limit)
	if !more {
		var err error
		if msgs, through, err = rr.ReadRangeMarked(ctx, after, mark, limit); err != nil {
			return nil, false, 0, err
		}
		below = through
		if len(msgs) == limit {
			through, more = msgs[len(msgs)-1].Position, true
		}
	}
	byPart := make([][]Message, s.Partitions())
	counts := make([]int, s.Partitions())
	for _, m := range msgs {
		counts[m.Partition]++
	}
	for p, n := range counts {
		byPart[p] = make([]Message, 0, n)
	}
	for _, m := range msgs {
		if m.Position > through {
			break
		}
		st := r.parts[partKey{s.Name(), m.Partition}]
		if m.Position <= st.read {
			continue // this partition read it in an earlier poll
		}
		m.Generation, _ = ps.leased(m.Partition)
		byPart[m.Partition] = append(byPart[m.Partition], m)
		if r.opts.Transactional && len(byPart[m.Partition]) == r.opts.PageSize {
			// Transactional applies of a partition commit one after the
			// other, so a partition given more than a page slows the
			// catch-up (measured with the bench's Transactional runner).
			// What follows the cut is read again.
			through, more = m.Position, true
		}
	}
	batch := make([]Message, 0, len(msgs))
	for p := range s.Partitions() {
		st := r.parts[partKey{s.Name(), p}]
		if st.read >= through {
			continue
		}
		undo.begin(st, byPart[p])
		batch = append(batch, byPart[p]...)
		st.read = through
	}
	if more && through == msgs[len(msgs)-1].Position {
		// The next poll reads from through (every partition read up to
		// it): read that page, and the ones after it, while this one
		// applies.
		r.fillAhead(ctx, s.Name(), rr, through, mark, limit)
	} else {
		delete(r.ahead, s.Name())
	}
	return batch, more, below, nil
}

// readMarked reads a page of s and the mark it was read below: the
// source's own (MarkedReader), else the poll's mark.
func readMarked(ctx context.Context, s Source, partition int, after, upto int64, limit int) ([]Message, int64, error) {
	if mr, ok := s.(MarkedReader); ok {
		return mr.ReadMarked(ctx, partition, after, upto, limit)
	}
	msgs, err := s.Read(ctx, partition, after, upto, limit)
	return msgs, upto, err
}

// replayBound is the most a poll reads of s below mark: mark, or s's
// replay_through while the poll runs a rebuild's replay (the consumer
// REBUILDING; a source empty at the begin replays nothing). What was
// appended since the begin is read after the switch, into the live read
// models.
func (r *Runner) replayBound(s Source, mark int64) int64 {
	if r.c.State != Rebuilding {
		return mark
	}
	through := int64(0)
	for p := range s.Partitions() {
		if st := r.parts[partKey{s.Name(), p}]; st != nil {
			through = st.through // the same on every partition of s
			break
		}
	}
	return min(mark, through)
}
