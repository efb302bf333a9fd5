package conformance

import (
	"context"
	"fmt"
	"reflect"
	"time"

	"github.com/tidemarkdb/tidemark/core/consumer"
	"github.com/tidemarkdb/tidemark/core/eventstore"
	"github.com/tidemarkdb/tidemark/core/hwm"
	"github.com/tidemarkdb/tidemark/core/projection"
	"github.com/tidemarkdb/tidemark/core/schema"
	"github.com/tidemarkdb/tidemark/core/topic"
)

// projTotals is a Global read model over the account read models.
type projTotals struct {
	Balances map[string]string `json:"balances"`
}

// testProjectionChained: a downstream projection listens to an upstream
// projection's read-model topic and converges on its read models: every
// state in order per read model, tombstones included; its own messages
// carry cascade depth 2.
func testProjectionChained(t T, env *Env) {
	cfg := defaultConfig(env)
	cfg.QueryTables = append(cfg.QueryTables, schema.QueryTable{Projection: "bank-totals"})
	e := openEngine(t, env, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r := &projRig{e: e}
	r.adv = hwm.New(e, hwm.Options{PollInterval: 10 * time.Millisecond})
	go func() { _ = r.adv.Run(ctx) }()
	r.s = eventstore.New(e, r.adv)
	var err error
	if r.st, err = projection.Open(ctx, e, accountProjection(env)); err != nil {
		t.Fatalf("projection.Open (upstream): %v", err)
	}
	down := projection.New("bank-totals", func(string) projTotals { return projTotals{Balances: map[string]string{}} },
		projection.WithScope(projection.Global))
	projection.OnReadModel(down, "account-summary", func(rm projection.ReadModel[projAccount], s *projTotals) error {
		if rm.Deleted {
			delete(s.Balances, rm.Key)
		} else {
			s.Balances[rm.Key] = rm.Value.Balance
		}
		return nil
	})
	dst, err := projection.Open(ctx, e, down)
	if err != nil {
		t.Fatalf("projection.Open (downstream): %v", err)
	}
	// The read-model topics' mark: advanced where one sequence numbers
	// every topic, the committed counter elsewhere (nil advancer).
	var waker consumer.Source = consumer.ReadModelTopic(r.st.Topic(), nil)
	if adv := topic.ReadModelAdvancer(e, hwm.Options{PollInterval: 10 * time.Millisecond}); adv != nil {
		go func() { _ = adv.Run(ctx) }()
		waker = consumer.ReadModelTopic(r.st.Topic(), adv)
	}
	if _, err := dst.Options(consumer.EventStore(r.s, r.adv)); err == nil {
		t.Errorf("downstream Options with an event-store source it does not listen to: want an error")
	}
	opts, err := dst.Options(waker)
	if err != nil {
		t.Fatalf("Options: %v", err)
	}
	opts.PollInterval = 20 * time.Millisecond
	run, err := consumer.NewRunner(ctx, consumer.NewRegistry(e, nil), opts)
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = run.Run(ctx) }()
	r.run(t, nil)
	r.append(t, "bank.Account", "t-1", projOpened{Rank: 1}, projDeposited{"10"})
	r.append(t, "bank.Account", "t-2", projOpened{Rank: 1}, projDeposited{"5"})
	r.append(t, "bank.Account", "t-3", projOpened{Rank: 1}, projDeposited{"1"}, projClosed{})
	r.append(t, "bank.Account", "t-1", projDeposited{"2.5"})
	want := map[string]string{"t-1": "12.50", "t-2": "5.00"}
	var got projTotals
	waitForOr(t, "bank-totals to converge", func() bool {
		v, ok, err := dst.Get(ctx, "bank-totals")
		got = v
		return err == nil && ok && reflect.DeepEqual(v.Balances, want)
	}, func() string { return fmt.Sprintf("bank-totals %v", got.Balances) })
	rec, err := dst.Topic().Latest(ctx, e.DB, "bank-totals")
	if err != nil || rec.CascadeDepth != 2 {
		t.Errorf("bank-totals' latest message: depth %d (%v), want 2", rec.CascadeDepth, err)
	}
}

// testProjectionCompaction: compacting a projection's read-model topic
// keeps each read model's latest message, the one its query-table row
// points at: every read model reads the same after, and each key keeps
// one message.
func testProjectionCompaction(t T, env *Env) {
	r := newProjRig(t, env)
	ctx := context.Background()
	if adv := topic.ReadModelAdvancer(r.e, hwm.Options{PollInterval: 10 * time.Millisecond}); adv != nil {
		actx, stop := context.WithCancel(ctx)
		defer stop()
		go func() { _ = adv.Run(actx) }()
	}
	for i := range 4 {
		r.append(t, "bank.Account", fmt.Sprintf("k-%d", i), projOpened{Rank: int64(i)}, projDeposited{"1"}, projDeposited{"2"})
	}
	r.run(t, nil)
	before := map[string]projAccount{}
	for i := range 4 {
		id := fmt.Sprintf("k-%d", i)
		before[id] = r.waitDeposits(t, id, 2)
	}
	tp := r.st.Topic()
	latest := map[string]int64{}
	for id := range before {
		rec, err := tp.Latest(ctx, r.e.DB, id)
		if err != nil {
			t.Fatal(err)
		}
		latest[id] = rec.Position
	}
	top := int64(0)
	for _, p := range latest {
		top = max(top, p)
	}
	waitFor(t, "the read-model topic's mark to pass the latest states", func() bool {
		m, err := tp.Mark(ctx)
		return err == nil && m >= top
	})
	res, err := tp.Compact(ctx, topic.CompactOptions{})
	if err != nil {
		t.Fatalf("Compact: %v", err)
	}
	if res.Superseded != 8 {
		t.Errorf("Compact deleted %d superseded messages, want 8 (3 states per read model, the last kept)", res.Superseded)
	}
	recs, err := tp.ReadTopic(ctx, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	per := map[string]int{}
	for _, rec := range recs {
		per[rec.Key]++
		if rec.Position != latest[rec.Key] {
			t.Errorf("%s kept position %d, want its latest %d", rec.Key, rec.Position, latest[rec.Key])
		}
	}
	for id, want := range before {
		got, ok, err := r.st.Get(ctx, id)
		if err != nil || !ok || !reflect.DeepEqual(got, want) || per[id] != 1 {
			t.Errorf("%s after compaction: %+v, %v, %v (%d messages); want %+v and one message", id, got, ok, err, per[id], want)
		}
	}
}
