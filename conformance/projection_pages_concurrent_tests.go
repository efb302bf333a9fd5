package conformance

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tidemarkdb/tidemark/core/projection"
)

// Sizes of testPagesStableUnderConcurrentWrites.
const (
	stableModels = 30
	doomedModels = 15
	stablePasses = 4
)

// stableAccount is the i-th read model of testPagesStableUnderConcurrentWrites
// that lives through the whole paging with its ordering fields unchanged.
func stableAccount(i int) (key string, opened projOpened) {
	o := projOpened{Rank: int64(i % 5)}
	if i%4 != 0 {
		o.IBAN = fmt.Sprintf("IBS%03d", i)
	}
	return fmt.Sprintf("s-%03d", i), o
}

// concurrentWriter appends a round after each tick until stop: a new read
// model (w-j), a deposit to a stable one (an update of a field no page
// orders by) and, for the first doomedModels rounds, the close of a doomed
// one (d-j); done counts the rounds appended. Paced by the reader's pages,
// the writes land while pages are read and never outrun the paging.
func concurrentWriter(t T, r *projRig, tick, stop <-chan struct{}, done *atomic.Int64) {
	for j := 0; ; j++ {
		select {
		case <-stop:
			return
		case <-tick:
		}
		o := projOpened{Rank: int64(j % 5)}
		if j%3 != 0 {
			o.IBAN = fmt.Sprintf("IBW%05d", j)
		}
		r.append(t, "bank.Account", fmt.Sprintf("w-%05d", j), o)
		key, _ := stableAccount(j % stableModels)
		r.append(t, "bank.Account", key, projDeposited{"1"})
		if j < doomedModels {
			r.append(t, "bank.Account", fmt.Sprintf("d-%03d", j), projClosed{})
		}
		done.Store(int64(j + 1))
	}
}

// testPagesStableUnderConcurrentWrites: while a writer inserts read
// models, deletes others and updates a field no page orders by of the
// rest, a reader pages (3 a page) by a query field in both directions
// (by IBAN, where some read models have none, and by rank over a range);
// every read model present for the whole paging appears exactly once per
// pass and in order. The passes wait for the writer's applies between
// them, so writes land while pages are read.
func testPagesStableUnderConcurrentWrites(t T, env *Env) {
	r := newProjRig(t, env)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var stable []handRow
	for i := range stableModels {
		key, o := stableAccount(i)
		r.append(t, "bank.Account", key, o)
		h := handRow{key: key, rank: handPtr(o.Rank)}
		if o.IBAN != "" {
			h.iban = handPtr(o.IBAN)
		}
		stable = append(stable, h)
	}
	for i := range doomedModels {
		r.append(t, "bank.Account", fmt.Sprintf("d-%03d", i), projOpened{IBAN: fmt.Sprintf("IBD%03d", i), Rank: int64(i % 5)})
	}
	r.run(t, nil)
	waitFor(t, "every read model applied", func() bool {
		c, err := r.st.Count(ctx)
		return err == nil && c == stableModels+doomedModels
	})
	tick, stop := make(chan struct{}, 1), make(chan struct{})
	var done atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); concurrentWriter(t, r, tick, stop, &done) }()
	defer func() { close(stop); wg.Wait() }()
	afterPage := func() {
		select {
		case tick <- struct{}{}:
		default: // a round is pending already
		}
	}
	queries := []projection.Query{{OrderBy: "iban"}, {OrderBy: "iban", Desc: true},
		{Where: []projection.Cond{projection.Ge("rank_no", 2)}, OrderBy: "rank_no"},
		{Where: []projection.Cond{projection.Ge("rank_no", 2)}, OrderBy: "rank_no", Desc: true}}
	for pass := range stablePasses {
		if pass > 0 {
			awaitWriterApplied(t, r, &done)
		}
		for _, q := range queries {
			q.Limit = 3
			keep := func(h handRow) bool { return q.OrderBy == "iban" || *h.rank >= 2 }
			got := onlyKeys(pageAllThen(ctx, t, r.st, q, 10_000, afterPage), stable)
			if want := handOrder(stable, q, keep); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("pass %d by %q desc=%v: the stable read models paged\n got %v\nwant %v", pass+1, q.OrderBy, q.Desc, got, want)
			}
		}
	}
}

// awaitWriterApplied waits until the writer has appended a round and the
// projection applied its new read model.
func awaitWriterApplied(t T, r *projRig, done *atomic.Int64) {
	t.Helper()
	var key string
	waitFor(t, "a round of the writer appended", func() bool {
		n := done.Load()
		key = fmt.Sprintf("w-%05d", n-1)
		return n > 0
	})
	waitFor(t, "the writer's read model "+key+" applied", func() bool {
		_, ok, err := r.st.Get(context.Background(), key)
		return err == nil && ok
	})
}

// onlyKeys is keys without those not in rows, in their order.
func onlyKeys(keys []string, rows []handRow) []string {
	in := map[string]bool{}
	for _, r := range rows {
		in[r.key] = true
	}
	out := []string{}
	for _, k := range keys {
		if in[k] {
			out = append(out, k)
		}
	}
	return out
}
