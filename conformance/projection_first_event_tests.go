package conformance

import (
	"context"
	"fmt"
	"reflect"
	"time"

	"github.com/tidemarkdb/tidemark/core/consumer"
	"github.com/tidemarkdb/tidemark/core/eventstore"
	"github.com/tidemarkdb/tidemark/internal/sqlcount"
)

// testProjectionChunkFirstEventsSharedIDs: a chunk takes the read model an
// aggregate's first event starts for new without reading it. An aggregate
// of another type under the same id (on its own event table: one table's
// ids are unique across its types) breaks that: its first event finds the
// read model of the first type's events. Then the outcome must still be
// the one of applying each event on its own — a first event that deletes
// the read model deletes it, one that updates it updates it (no unique
// violation surfaces) — and the read models and topic messages equal a
// one-event-per-transaction build's, after each of the three rounds.
func testProjectionChunkFirstEventsSharedIDs(t T, env *Env) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	chunked, single, cfg := chunkedAndSingle(env)
	e := openEngine(t, env, cfg)
	s := eventstore.New(e, nil)
	stChunked, stSingle := openProj(t, e, chunked), openProj(t, e, single)
	var counts sqlcount.Counts
	adv := advancerOf(e)
	n := 0
	add := func(typ, id string, evs ...any) {
		t.Helper()
		last := appendProjEvents(t, s, typ, id, evs...)
		n += len(evs)
		if _, err := advanceUntil(ctx, adv, s, last); err != nil {
			t.Fatalf("advancing: %v", err)
		}
	}
	// Each round also opens new accounts, two events each, so that every
	// partition's chunk holds several events.
	fresh := func(round int) {
		for i := range 40 {
			add("bank.Account", fmt.Sprintf("r%d-%02d", round, i), projOpened{IBAN: fmt.Sprintf("R%d-%02d", round, i)}, projDeposited{"1"})
		}
	}
	round := func(name string, want func(map[string]projAccount)) {
		t.Helper()
		catchUpProj(ctx, t, e, s, stChunked, &counts, n, nil)
		catchUpProj(ctx, t, e, s, stSingle, &counts, n, func(o *consumer.Options) { o.TxBatch, o.Workers = 1, 1 })
		n = 0
		a, b := allModels(ctx, t, stChunked), allModels(ctx, t, stSingle)
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s: read models differ:\n chunked %v\n one by one %v", name, a, b)
		}
		if ma, mb := topicByKey(ctx, t, e, chunked.Name()), topicByKey(ctx, t, e, single.Name()); !reflect.DeepEqual(ma, mb) {
			t.Errorf("%s: read-model topics differ:\n chunked %v\n one by one %v", name, ma, mb)
		}
		want(a)
	}
	for i := range 20 {
		add("bank.Account", fmt.Sprintf("s-%02d", i), projOpened{IBAN: fmt.Sprintf("IB-%02d", i)}, projDeposited{"1"})
	}
	fresh(1)
	round("accounts opened", func(a map[string]projAccount) {
		if len(a) != 60 {
			t.Errorf("accounts opened: %d read models, want 60", len(a))
		}
	})
	// Bank accounts (their own table) under five of the accounts' ids: their first event closes.
	for i := 10; i < 15; i++ {
		add("bank.BankAccount", fmt.Sprintf("s-%02d", i), projClosed{})
	}
	fresh(2)
	round("first events closing", func(a map[string]projAccount) {
		for i := 10; i < 15; i++ {
			if m, ok := a[fmt.Sprintf("s-%02d", i)]; ok {
				t.Errorf("first events closing: s-%02d still there (%+v): a bank account's first event deleted nothing", i, m)
			}
		}
	})
	// Bank accounts (their own table) under ten others: their first event deposits.
	for i := range 10 {
		add("bank.BankAccount", fmt.Sprintf("s-%02d", i), projDeposited{"2"})
	}
	fresh(3)
	round("first events depositing", func(a map[string]projAccount) {
		for i := range 10 {
			if m := a[fmt.Sprintf("s-%02d", i)]; m.Balance != "3.00" || m.IBAN == nil {
				t.Errorf("first events depositing: s-%02d is %+v, want balance 3 and its IBAN kept", i, m)
			}
		}
	})
}
