package conformance

import (
	"context"
	"database/sql"
	"sync"
	"time"

	"github.com/tidemarkdb/tidemark/core/consumer"
	"github.com/tidemarkdb/tidemark/core/eventstore"
)

// rangeWatch is an event-store source that reports each range read as it
// begins.
type rangeWatch struct {
	consumer.SourceOf[eventstore.Recorded]
	mu     sync.Mutex
	reads  int
	change chan struct{}
}

func (w *rangeWatch) ReadRangeMarked(ctx context.Context, after, upto int64, limit int) ([]consumer.Message, int64, error) {
	w.mu.Lock()
	w.reads++
	close(w.change)
	w.change = make(chan struct{})
	w.mu.Unlock()
	return w.SourceOf.(consumer.RangeReader).ReadRangeMarked(ctx, after, upto, limit)
}

// RangeReads is the watched source's own answer.
func (w *rangeWatch) RangeReads() bool {
	o, ok := w.SourceOf.(interface{ RangeReads() bool })
	return !ok || o.RangeReads()
}

// awaitReads waits until n range reads began (true) or guard passed.
func (w *rangeWatch) awaitReads(ctx context.Context, n int, guard time.Duration) bool {
	timeout := time.After(guard)
	for {
		w.mu.Lock()
		got, change := w.reads, w.change
		w.mu.Unlock()
		if got >= n {
			return true
		}
		select {
		case <-change:
		case <-timeout:
			return false
		case <-ctx.Done():
			return false
		}
	}
}

// testReadsAhead: a catch-up reads the next page of a source while the
// poll that read the page before it applies it, and every event is still
// applied once, in order. The handler of the first page's last event waits
// for the next range read to begin: a runner that read only after its
// applies ended would meet the wait's guard (a hang guard, far above any
// read, scaled like the suite's other waits) and fail.
func testReadsAhead(t T, env *Env) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	s, e := openStore(t, env)
	reg := consumer.NewRegistry(e, nil)
	src := &rangeWatch{SourceOf: consumer.EventStore(s, nil), change: make(chan struct{})}
	const pageSize = 2
	page := pageSize * e.Partitions // one range read's limit
	var log pollLog
	early := false
	r, err := consumer.NewRunner(ctx, reg, consumer.Options{Type: "projection", Name: "reads-ahead",
		Workers: 1, PageSize: pageSize,
		Routes: []consumer.Route{consumer.On(consumer.SourceOf[eventstore.Recorded](src), func(ctx context.Context, tx *sql.Tx, m consumer.Msg[eventstore.Recorded]) error {
			_ = log.handler(ctx, tx, m)
			if len(log.counts()) == page && !src.awaitReads(ctx, 2, time.Minute) {
				early = true
			}
			return nil
		})}})
	if err != nil {
		t.Fatal(err)
	}
	startAtMark(ctx, t, reg, r, s)
	id := newID(t)
	evs := make([]eventstore.Event, 2*page+1)
	for i := range evs {
		evs[i] = ev("test.E", `{}`)
	}
	appended := appendAndPublish(t, s, e, eventstore.Stream{AggregateType: "test.Account", AggregateID: id, Events: evs})
	n, err := r.Poll(ctx)
	if err != nil {
		t.Fatalf("first poll: %v", err)
	}
	if n != page {
		t.Fatalf("the first poll applied %d events, want a page of %d", n, page)
	}
	if early {
		src.mu.Lock()
		reads := src.reads
		src.mu.Unlock()
		t.Fatalf("no read of the next page began while the first page applied (%d range reads)", reads)
	}
	for total := n; total < len(evs); {
		k, err := r.Poll(ctx)
		if err != nil {
			t.Fatalf("poll: %v", err)
		}
		if k == 0 {
			t.Fatalf("a poll applied nothing after %d of %d events", total, len(evs))
		}
		total += k
	}
	log.mu.Lock()
	defer log.mu.Unlock()
	if len(log.order) != len(evs) {
		t.Fatalf("applied %d events, want %d once each", len(log.order), len(evs))
	}
	for i, m := range log.order {
		if want := appended.Positions[i]; m.Position != want {
			t.Fatalf("apply %d was position %d, want %d (in order, once each)", i, m.Position, want)
		}
	}
}

// holeySource is an event-store source that never serves the positions in
// hidden, as a log whose positions have holes (appends that aborted after
// drawing theirs): a page of limit messages then ends further than limit
// positions after where it began. It counts its range reads as rangeWatch.
type holeySource struct {
	rangeWatch
	hidden map[int64]bool
}

func (g *holeySource) ReadRangeMarked(ctx context.Context, after, upto int64, limit int) ([]consumer.Message, int64, error) {
	msgs, below, err := g.rangeWatch.ReadRangeMarked(ctx, after, upto, 2*limit)
	if err != nil {
		return nil, 0, err
	}
	return g.hide(msgs, below, limit)
}

func (g *holeySource) ReadMarked(ctx context.Context, partition int, after, upto int64, limit int) ([]consumer.Message, int64, error) {
	msgs, below, err := g.SourceOf.(consumer.MarkedReader).ReadMarked(ctx, partition, after, upto, 2*limit)
	if err != nil {
		return nil, 0, err
	}
	return g.hide(msgs, below, limit)
}

func (g *holeySource) Read(ctx context.Context, partition int, after, upto int64, limit int) ([]consumer.Message, error) {
	msgs, _, err := g.ReadMarked(ctx, partition, after, upto, limit)
	return msgs, err
}

// hide drops the hidden positions of a page read with twice the limit: a
// full page of the rest, or a short one that reached the end of the read
// (below where the read stopped when it was full).
func (g *holeySource) hide(msgs []consumer.Message, below int64, limit int) ([]consumer.Message, int64, error) {
	var out []consumer.Message
	for _, m := range msgs {
		if g.hidden[m.Position] {
			continue
		}
		if out = append(out, m); len(out) == limit {
			return out, below, nil
		}
	}
	if len(msgs) == 2*limit {
		below = msgs[len(msgs)-1].Position
	}
	return out, below, nil
}

// testReadsAheadOverGaps: a catch-up keeps two range reads in flight while
// a poll applies, the second a page of positions after the first, and
// over a log with holes in its positions (so pages end further than a
// page of positions apart, and consecutive reads overlap) still applies
// every message once, in order, using the reads it began (at most the
// two in flight at the end go unused). The first page's last handler
// waits for the third range read to begin: a runner with one read ahead
// meets the wait's guard and fails.
func testReadsAheadOverGaps(t T, env *Env) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	s, e := openStore(t, env)
	reg := consumer.NewRegistry(e, nil)
	src := &holeySource{rangeWatch: rangeWatch{SourceOf: consumer.EventStore(s, nil), change: make(chan struct{})},
		hidden: map[int64]bool{}}
	const pageSize = 2
	page := pageSize * e.Partitions
	var log pollLog
	early := false
	r, err := consumer.NewRunner(ctx, reg, consumer.Options{Type: "projection", Name: "reads-ahead-gaps",
		Workers: 1, PageSize: pageSize, ReadAhead: 2,
		Routes: []consumer.Route{consumer.On(consumer.SourceOf[eventstore.Recorded](src), func(ctx context.Context, tx *sql.Tx, m consumer.Msg[eventstore.Recorded]) error {
			_ = log.handler(ctx, tx, m)
			if len(log.counts()) == page && !src.awaitReads(ctx, 3, time.Minute) {
				early = true
			}
			return nil
		})}})
	if err != nil {
		t.Fatal(err)
	}
	startAtMark(ctx, t, reg, r, s)
	id := newID(t)
	evs := make([]eventstore.Event, 9*page)
	for i := range evs {
		evs[i] = ev("test.E", `{}`)
	}
	appended := appendAndPublish(t, s, e, eventstore.Stream{AggregateType: "test.Account", AggregateID: id, Events: evs})
	var want []int64
	for i, p := range appended.Positions {
		if i%3 == 1 {
			src.hidden[p] = true
		} else {
			want = append(want, p)
		}
	}
	polls := 0
	for total := 0; total < len(want); polls++ {
		k, err := r.Poll(ctx)
		if err != nil {
			t.Fatalf("poll %d: %v", polls, err)
		}
		if k == 0 {
			t.Fatalf("a poll applied nothing after %d of %d events", total, len(want))
		}
		if polls == 0 && early {
			t.Fatalf("fewer than two reads ahead began while the first page applied")
		}
		total += k
	}
	log.mu.Lock()
	defer log.mu.Unlock()
	if len(log.order) != len(want) {
		t.Fatalf("applied %d events, want %d once each", len(log.order), len(want))
	}
	for i, m := range log.order {
		if m.Position != want[i] {
			t.Fatalf("apply %d was position %d, want %d (in order, once each, none hidden)", i, m.Position, want[i])
		}
	}
	src.mu.Lock()
	reads := src.reads
	src.mu.Unlock()
	if reads > polls+2 {
		t.Fatalf("%d range reads for %d polls: reads ahead over the holes were dropped and read again", reads, polls)
	}
}
