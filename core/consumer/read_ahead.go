package consumer

import "context"

// readAhead is a range read of a source's page begun while a poll applies
// the page before it: a catch-up then reads and applies at once instead of
// one after the other. It is only a read of the log: the poll that takes
// it filters, fences and applies its messages as it would a page it read
// itself, and one that finds it does not fit (a gap before it, a smaller
// page, a mark above the poll's, a failed or short read) drops it and
// reads.
//
// Up to Options.ReadAhead reads are in flight, each a page further: the
// first starts where the poll's page ended, each next one a page of
// positions after the one before it (positions are dense but for the few
// an aborted append leaves, so that is where the page before will end or
// a little past it). A full page of limit messages after a position p
// ends at p+limit or later, so the pages of a queue cover the log without
// a hole; what two pages both hold is dropped from the later one.
type readAhead struct {
	after, upto int64
	limit       int
	done        chan struct{}
	msgs        []Message
	below       int64
	err         error
}

// startAhead begins reading the page of rr after after, below upto (the
// poll's mark), in the background, at the end of source name's queue.
func (r *Runner) startAhead(ctx context.Context, name string, rr RangeReader, after, upto int64, limit int) {
	a := &readAhead{after: after, upto: upto, limit: limit, done: make(chan struct{})}
	go func() {
		defer close(a.done)
		a.msgs, a.below, a.err = rr.ReadRangeMarked(ctx, after, upto, limit)
	}()
	if r.ahead == nil {
		r.ahead = map[string][]*readAhead{}
	}
	r.ahead[name] = append(r.ahead[name], a)
}

// fillAhead keeps source name's queue of reads ahead at its depth for a
// poll that read through through (more to read): the queue must begin at
// or below through (else it is dropped), and the reads added each start a
// page of positions after the last one.
func (r *Runner) fillAhead(ctx context.Context, name string, rr RangeReader, through, upto int64, limit int) {
	q := r.ahead[name]
	if len(q) > 0 && (q[0].after > through || q[0].limit != limit) {
		delete(r.ahead, name) // a hole before it, or another page size
		q = nil
	}
	next := through
	if len(q) > 0 {
		next = q[len(q)-1].after + int64(limit)
	}
	for n := len(q); n < r.opts.ReadAhead; n++ {
		r.startAhead(ctx, name, rr, next, upto, limit)
		next += int64(limit)
	}
}

// takeAhead returns the page after after that source name's reads ahead
// hold, when the first of them that reaches past after begins at or
// below it, has this poll's limit, was read below a mark no higher than
// this poll's and came back full (a full page holds the same messages
// whatever mark it was read below, every position under a mark being
// final): its messages past after, through its last one, the mark it was
// read below, with more to read. Reads that end at or below after are passed over; anything else
// drops the queue (false): the poll reads itself.
func (r *Runner) takeAhead(ctx context.Context, name string, after, mark int64, limit int) (msgs []Message, through, below int64, ok bool) {
	for {
		q := r.ahead[name]
		if len(q) == 0 {
			return nil, 0, 0, false
		}
		a := q[0]
		if a.after > after || a.limit != limit || a.upto > mark {
			delete(r.ahead, name)
			return nil, 0, 0, false
		}
		select {
		case <-a.done:
		case <-ctx.Done():
			delete(r.ahead, name)
			return nil, 0, 0, false
		}
		if a.err != nil || len(a.msgs) < limit {
			delete(r.ahead, name)
			return nil, 0, 0, false
		}
		r.ahead[name] = q[1:]
		through = a.msgs[len(a.msgs)-1].Position
		if through <= after {
			continue // wholly behind the poll: the next read may reach past it
		}
		i := 0
		for i < len(a.msgs) && a.msgs[i].Position <= after {
			i++
		}
		return a.msgs[i:], through, a.below, true
	}
}
