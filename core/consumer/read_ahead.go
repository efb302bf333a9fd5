package consumer

import "context"

// readAhead is the range read of a source's next page, begun while the
// poll that read the page before it applies it: a catch-up then reads and
// applies at once instead of one after the other. It is only a read of
// the log: the poll that takes it filters, fences and applies its messages
// as it would a page it read itself, and one that finds it does not fit
// (another start, a smaller page, a failed read) drops it and reads.
type readAhead struct {
	after, upto int64
	limit       int
	done        chan struct{}
	msgs        []Message
	below       int64
	err         error
}

// startAhead begins reading the page of rr after after, below upto (the
// poll's mark), in the background.
func (r *Runner) startAhead(ctx context.Context, name string, rr RangeReader, after, upto int64, limit int) {
	a := &readAhead{after: after, upto: upto, limit: limit, done: make(chan struct{})}
	go func() {
		defer close(a.done)
		a.msgs, a.below, a.err = rr.ReadRangeMarked(ctx, after, upto, limit)
	}()
	if r.ahead == nil {
		r.ahead = map[string]*readAhead{}
	}
	r.ahead[name] = a
}

// takeAhead returns the page read ahead for source name when it is the
// read this poll would make (after, limit; read below a mark no higher
// than this poll's) and came back whole: a full page holds the same
// messages whatever mark it was read below, every position under a mark
// being final. Anything else is dropped (false): the poll reads itself.
func (r *Runner) takeAhead(ctx context.Context, name string, after, mark int64, limit int) ([]Message, bool) {
	a := r.ahead[name]
	delete(r.ahead, name)
	if a == nil || a.after != after || a.limit != limit || a.upto > mark {
		return nil, false
	}
	select {
	case <-a.done:
	case <-ctx.Done():
		return nil, false
	}
	if a.err != nil || len(a.msgs) < limit {
		return nil, false
	}
	return a.msgs, true
}
