package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/tidemarkdb/tidemark/core/consumer"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/eventstore"
	"github.com/tidemarkdb/tidemark/core/hwm"
	"github.com/tidemarkdb/tidemark/core/projection"
	"github.com/tidemarkdb/tidemark/core/schema"
	"github.com/tidemarkdb/tidemark/core/topic"
)

func jsonOf(v any) ([]byte, error) { return json.Marshal(v) }

// testProjectionApplyFind: events become read models; Get returns their
// state and every query-field kind is written and found (a time with
// nanoseconds matches its microsecond cut, a decimal compares as a number,
// not as text).
func testProjectionApplyFind(t T, env *Env) {
	r := newProjRig(t, env)
	ctx := context.Background()
	opened := time.Date(2026, 3, 4, 5, 6, 7, 123456789, time.UTC)
	r.append(t, "bank.Account", "a-1", projOpened{IBAN: "DE01", OpenedAt: opened, Rank: 3}, projDeposited{"9.50"}, projDeposited{"1.25"})
	r.append(t, "bank.Account", "a-2", projOpened{IBAN: "DE02", OpenedAt: opened.Add(48 * time.Hour), Rank: 1}, projDeposited{"100"})
	r.append(t, "bank.Account", "a-3", projOpened{OpenedAt: opened.Add(time.Hour), Rank: 2}, projDeposited{"20.5"})
	r.append(t, "bank.Account", "other", projDeposited{"1"}) // no open: starts from init
	r.run(t, nil)
	got := r.waitDeposits(t, "a-1", 2)
	if got.Balance != "10.75" || got.IBAN == nil || *got.IBAN != "DE01" || !got.OpenedAt.Equal(opened) || got.Rank != 3 {
		t.Errorf("a-1 = %+v, want balance 10.75, iban DE01, opened %v (the document keeps nanoseconds), rank 3", got, opened)
	}
	r.waitDeposits(t, "a-2", 1)
	r.waitDeposits(t, "a-3", 1)
	r.waitDeposits(t, "other", 1)
	if _, ok, err := r.st.Get(ctx, "nobody"); ok || err != nil {
		t.Errorf("Get(nobody) = %v, %v; want no read model", ok, err)
	}
	it, ok, err := r.st.FindUnique(ctx, "iban", "DE02")
	if err != nil || !ok || it.Key != "a-2" {
		t.Errorf("FindUnique(iban DE02) = %+v, %v, %v; want a-2", it, ok, err)
	}
	if _, _, err := r.st.FindUnique(ctx, "rank_no", 1); !errors.Is(err, projection.ErrNotUnique) {
		t.Errorf("FindUnique on a column not declared unique: %v, want ErrNotUnique", err)
	}
	if _, err := r.st.Find(ctx, projection.Query{Where: []projection.Cond{projection.Eq("nope", 1)}}); !errors.Is(err, projection.ErrUnknownColumn) {
		t.Errorf("Find on an undeclared column: %v, want ErrUnknownColumn", err)
	}
	cases := []struct {
		what string
		q    projection.Query
		want []string
	}{
		{"balance >= 10.75 by balance (numeric, not text, order)", projection.Query{Where: []projection.Cond{projection.Ge("balance", "10.75")}, OrderBy: "balance"}, []string{"a-1", "a-3", "a-2"}},
		{"opened_at = the nanosecond time (cut to microseconds both ways)", projection.Query{Where: []projection.Cond{projection.Eq("opened_at", opened)}}, []string{"a-1"}},
		{"opened_on = its date", projection.Query{Where: []projection.Cond{projection.Eq("opened_on", opened)}, OrderBy: "rank_no"}, []string{"a-3", "a-1"}},
		{"rank_no IN (1,3) descending", projection.Query{Where: []projection.Cond{projection.In("rank_no", 1, 3)}, OrderBy: "rank_no", Desc: true}, []string{"a-1", "a-2"}},
		{"active = true, iban IS NULL", projection.Query{Where: []projection.Cond{projection.Eq("active", true), projection.IsNull("iban")}}, []string{"a-3"}},
		{"active = false", projection.Query{Where: []projection.Cond{projection.Eq("active", false)}}, []string{"other"}},
		{"opened_at between", projection.Query{Where: []projection.Cond{projection.Gt("opened_at", opened), projection.Lt("opened_at", opened.Add(72*time.Hour))}, OrderBy: "opened_at"}, []string{"a-3", "a-2"}},
	}
	for _, c := range cases {
		page, err := r.st.Find(ctx, c.q)
		if err != nil {
			t.Errorf("%s: %v", c.what, err)
			continue
		}
		if got := keysOf(page.Items); fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%s: %v, want %v", c.what, got, c.want)
		}
	}
	if n, err := r.st.Count(ctx, projection.Eq("active", true)); err != nil || n != 3 {
		t.Errorf("Count(active) = %d, %v; want 3", n, err)
	}
}

func keysOf[S any](items []projection.Item[S]) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.Key
	}
	return out
}

// testProjectionDelete: a listener returning Delete removes the read
// model (Get and finders no longer see it); a later event starts a new
// one from init.
func testProjectionDelete(t T, env *Env) {
	r := newProjRig(t, env)
	ctx := context.Background()
	r.append(t, "bank.Account", "d-1", projOpened{IBAN: "DE11", Rank: 1}, projDeposited{"5"}, projClosed{})
	r.append(t, "bank.Account", "d-2", projOpened{IBAN: "DE12", Rank: 1}, projDeposited{"5"})
	r.run(t, nil)
	r.waitDeposits(t, "d-2", 1)
	// The tombstone carries the last state (one deposit) and commits with
	// the row's deletion.
	var last topic.ReadModelRecord
	waitFor(t, "d-1's tombstone", func() bool {
		rec, err := r.st.Topic().Latest(ctx, r.e.DB, "d-1")
		last = rec
		return err == nil && rec.Deleted
	})
	var lastState projAccount
	if err := json.Unmarshal(last.Payload, &lastState); err != nil || lastState.Deposits != 1 || last.Type != "projAccount" {
		t.Errorf("d-1's tombstone: type %q, state %s (%v); want projAccount with its last state (1 deposit)", last.Type, last.Payload, err)
	}
	if _, ok, err := r.st.Get(ctx, "d-1"); ok || err != nil {
		t.Errorf("Get(d-1) after its tombstone = %v, %v; want no read model", ok, err)
	}
	if _, ok, err := r.st.FindUnique(ctx, "iban", "DE11"); ok || err != nil {
		t.Errorf("FindUnique(DE11) after the delete = %v, %v; want none", ok, err)
	}
	// Its unique value is free again, and a new event starts from init.
	r.append(t, "bank.Account", "d-1", projOpened{IBAN: "DE11", Rank: 2}, projDeposited{"1"})
	got := r.waitDeposits(t, "d-1", 1)
	if got.Balance != "1.00" || got.Rank != 2 {
		t.Errorf("d-1 after re-creation = %+v, want a new read model (balance 1.00, rank 2)", got)
	}
}

// testProjectionRestart: stopping and restarting the projection applies
// every event exactly once (the read model and the checkpoint commit
// together).
func testProjectionRestart(t T, env *Env) {
	r := newProjRig(t, env)
	for i := range 3 {
		r.append(t, "bank.Account", "r-1", projDeposited{"1"})
		stop := r.run(t, nil)
		r.waitDeposits(t, "r-1", i+1)
		stop()
	}
	r.append(t, "bank.Account", "r-1", projDeposited{"1"}, projDeposited{"1"})
	r.run(t, nil)
	if got := r.waitDeposits(t, "r-1", 5); got.Balance != "5.00" {
		t.Errorf("balance %s after 5 deposits of 1, want 5.00", got.Balance)
	}
}

// testProjectionPages: keyset pages over read models with and without a
// value in the order column, ascending and descending, each read model
// exactly once and in order, the cursor carried as text.
func testProjectionPages(t T, env *Env) {
	r := newProjRig(t, env)
	ctx := context.Background()
	const n = 23
	for i := range n {
		o := projOpened{Rank: int64(i % 4)}
		if i%3 != 0 {
			o.IBAN = fmt.Sprintf("IB%02d", (i*7)%n)
		}
		r.append(t, "bank.Account", fmt.Sprintf("p-%02d", i), o, projDeposited{"1"})
	}
	r.run(t, nil)
	waitFor(t, "23 read models", func() bool {
		c, err := r.st.Count(ctx)
		return err == nil && c == n
	})
	for _, q := range []projection.Query{{OrderBy: "iban"}, {OrderBy: "iban", Desc: true}, {OrderBy: "rank_no", Desc: true}, {}, {Desc: true}} {
		all, err := r.st.Find(ctx, projection.Query{OrderBy: q.OrderBy, Desc: q.Desc, Limit: n + 1})
		if err != nil {
			t.Fatalf("Find %+v: %v", q, err)
		}
		if len(all.Items) != n || !all.Next.Done() {
			t.Fatalf("one page of %+v: %d items (done %v), want %d", q, len(all.Items), all.Next.Done(), n)
		}
		checkPageOrder(t, q, all.Items)
		var paged []string
		q.Limit = 5
		for pages := 0; ; pages++ {
			if pages > n {
				t.Fatalf("%+v: pages do not end", q)
			}
			page, err := r.st.Find(ctx, q)
			if err != nil {
				t.Fatalf("Find %+v: %v", q, err)
			}
			paged = append(paged, keysOf(page.Items)...)
			if page.Next.Done() {
				break
			}
			if q.After, err = projection.ParseCursor(page.Next.String()); err != nil {
				t.Fatalf("ParseCursor: %v", err)
			}
		}
		if fmt.Sprint(paged) != fmt.Sprint(keysOf(all.Items)) {
			t.Errorf("pages of 5 by %q desc=%v: %v, want %v", q.OrderBy, q.Desc, paged, keysOf(all.Items))
		}
	}
}

// checkPageOrder checks items are in q's order: by the column (read
// models without a value last), then by key.
func checkPageOrder(t T, q projection.Query, items []projection.Item[projAccount]) {
	t.Helper()
	less := func(a, b projection.Item[projAccount]) bool {
		switch q.OrderBy {
		case "iban":
			switch {
			case (a.Value.IBAN == nil) != (b.Value.IBAN == nil):
				return b.Value.IBAN == nil
			case a.Value.IBAN != nil && *a.Value.IBAN != *b.Value.IBAN:
				return (*a.Value.IBAN < *b.Value.IBAN) != q.Desc
			}
		case "rank_no":
			if a.Value.Rank != b.Value.Rank {
				return (a.Value.Rank < b.Value.Rank) != q.Desc
			}
		}
		return (a.Key < b.Key) != q.Desc
	}
	if !sort.SliceIsSorted(items, func(i, j int) bool { return less(items[i], items[j]) }) {
		t.Errorf("order by %q desc=%v: %v out of order", q.OrderBy, q.Desc, keysOf(items))
	}
}

// testProjectionConflicts: two aggregate types share an id, so their
// events update one read model from different keys of the consumer, on
// different workers at once; each save is conditioned on the message it
// read, so no deposit is lost.
func testProjectionConflicts(t T, env *Env) {
	r := newProjRig(t, env)
	const each = 40
	for range each / 10 {
		var a, b []any
		for range 10 {
			a, b = append(a, projDeposited{"1"}), append(b, projDeposited{"1"})
		}
		r.append(t, "bank.Account", "c-1", a...)
		r.append(t, "bank.BankAccount", "c-1", b...)
	}
	r.run(t, func(o *consumer.Options) { o.Workers = 8 })
	if got := r.waitDeposits(t, "c-1", 2*each); got.Balance != fmt.Sprintf("%d.00", 2*each) {
		t.Errorf("balance %s after %d deposits of 1", got.Balance, 2*each)
	}
}

// testProjectionDeclarationsRefused: declarations the store cannot run
// are refused with typed errors before any SQL: nothing is written (no
// consumer, no read-model topic row).
func testProjectionDeclarationsRefused(t T, env *Env) {
	e := openEngine(t, env, defaultConfig(env))
	ctx := context.Background()
	type money struct{ cents int64 }
	cases := map[string]func() error{
		"no listener": func() error {
			_, err := projection.Open(ctx, e, projection.New[projAccount]("account-summary", nil))
			return err
		},
		"a field type no column holds": func() error {
			p := accountProjection(env)
			projection.Field(p, "extra", projection.Integer, func(*projAccount) money { return money{} })
			_, err := projection.Open(ctx, e, p)
			return err
		},
		"decimal(39,2)": func() error {
			p := projection.New[projAccount]("account-summary", nil)
			projection.On(p, func(projDeposited, *projAccount) error { return nil })
			projection.Field(p, "balance", projection.Decimal, func(s *projAccount) string { return s.Balance }, projection.Digits(39, 2))
			_, err := projection.Open(ctx, e, p)
			return err
		},
		"fields other than the engine's table": func() error {
			p := projection.New[projAccount]("account-summary", nil)
			projection.On(p, func(projDeposited, *projAccount) error { return nil })
			projection.Field(p, "iban", projection.Text, func(s *projAccount) *string { return s.IBAN })
			_, err := projection.Open(ctx, e, p)
			return err
		},
	}
	for what, run := range cases {
		if err := run(); !errors.Is(err, projection.ErrInvalidDeclaration) {
			t.Errorf("%s: %v, want projection.ErrInvalidDeclaration", what, err)
		}
	}
	refuseConverters(t, env, e)
	p := projection.New[projAccount]("undeclared", nil)
	projection.On(p, func(projDeposited, *projAccount) error { return nil })
	_, err := projection.Open(ctx, e, p)
	expectErr[*engine.UndeclaredQueryTableError](t, err, "a projection whose query table the engine was not opened with")
	if n := countConsumers(t, env); n != 0 {
		t.Errorf("%d consumers after refused declarations, want 0", n)
	}
}

// projCount is a Global read model: every event of the listened types of
// every aggregate counted in one read model.
type projCount struct {
	Deposits int `json:"deposits"`
}

// testProjectionGlobal: a Global projection keeps one read model under
// its name; many workers applying at once lose no update (each save is
// conditioned on the message it read, a conflict retried).
func testProjectionGlobal(t T, env *Env) {
	appended := 0
	for _, workers := range []int{0, 6} {
		name := fmt.Sprintf("deposit-count-%d", workers)
		cfg := defaultConfig(env)
		cfg.QueryTables = append(cfg.QueryTables, schema.QueryTable{Projection: name})
		e := openEngine(t, env, cfg)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		adv := hwm.New(e, hwm.Options{PollInterval: 10 * time.Millisecond})
		go func() { _ = adv.Run(ctx) }()
		s := eventstore.New(e, adv)
		p := projection.New[projCount](name, nil, projection.WithScope(projection.Global))
		projection.On(p, func(_ projDeposited, c *projCount) error { c.Deposits++; return nil })
		st, err := projection.Open(ctx, e, p)
		if err != nil {
			t.Fatalf("projection.Open: %v", err)
		}
		// Each projection counts every deposit from the start of the store,
		// the earlier round's too.
		const n = 60
		appended += n
		for i := range n {
			if _, err := s.Append(ctx, eventstore.Stream{AggregateType: "bank.Account", AggregateID: fmt.Sprintf("g-%d", i%12),
				Events: []eventstore.Event{ev("projDeposited", `{"amount":"1"}`)}}); err != nil {
				t.Fatal(err)
			}
		}
		opts, err := st.Options(consumer.EventStore(s, adv))
		if err != nil {
			t.Fatalf("Options: %v", err)
		}
		opts.PollInterval = 20 * time.Millisecond
		if workers > 0 {
			opts.Workers = workers
		}
		failed := &failureCounter{}
		opts.Logger = slog.New(failed)
		run, err := consumer.NewRunner(ctx, consumer.NewRegistry(e, nil), opts)
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- run.Run(ctx) }()
		var got projCount
		waitForOr(t, name+" counts every deposit", func() bool {
			v, ok, err := st.Get(ctx, name)
			got = v
			return err == nil && ok && v.Deposits >= appended
		}, func() string { return fmt.Sprintf("count %d", got.Deposits) })
		if got.Deposits != appended {
			t.Errorf("%s with %d workers counted %d deposits, want %d", name, workers, got.Deposits, appended)
		}
		// Workers meeting the one read model (its first insert included) are
		// conflicts, re-applied from a fresh read: no message fails.
		if n := failed.count(); n > 0 {
			t.Errorf("%s with %d workers: %d messages failed (first: %s); a conflict between applies must not spend the failure budget", name, workers, n, failed.firstReason())
		}
		if page, err := st.Find(ctx, projection.Query{}); err != nil || len(page.Items) != 1 || page.Items[0].Key != name {
			t.Errorf("%s: Find = %+v, %v; want its one read model under its name", name, page.Items, err)
		}
		cancel()
		<-done
	}
}

// projAccountV2 is the account read model after a change: a field added
// (its default from init), one removed (rank).
type projAccountV2 struct {
	IBAN     *string `json:"iban,omitempty"`
	Balance  string  `json:"balance"`
	Deposits int     `json:"deposits"`
	Currency string  `json:"currency"`
}

// testProjectionEvolution: a read model stored before a field was added
// loads with the field's init value, a property the type no longer has is
// ignored, and the next save writes the new shape.
func testProjectionEvolution(t T, env *Env) {
	r := newProjRig(t, env)
	ctx := context.Background()
	r.append(t, "bank.Account", "v-1", projOpened{IBAN: "DE21", Rank: 7}, projDeposited{"2"})
	stop := r.run(t, nil)
	r.waitDeposits(t, "v-1", 1)
	stop()
	p := projection.New("account-summary", func(string) projAccountV2 { return projAccountV2{Balance: "0", Currency: "EUR"} })
	projection.On(p, func(e projDeposited, s *projAccountV2) error {
		s.Balance = addDecimal(s.Balance, e.Amount)
		s.Deposits++
		return nil
	})
	base := accountProjection(env).QueryTable()
	// The same query columns, filled from the new type.
	dec := base.Fields[1]
	projection.Field(p, "iban", projection.Text, func(s *projAccountV2) *string { return s.IBAN }, projection.Unique())
	projection.Field(p, "balance", projection.Decimal, func(s *projAccountV2) string { return s.Balance }, projection.Digits(dec.Precision, dec.Scale))
	projection.Field(p, "opened_on", projection.Date, func(*projAccountV2) *time.Time { return nil })
	projection.Field(p, "opened_at", projection.Instant, func(*projAccountV2) *time.Time { return nil })
	projection.Field(p, "active", projection.Boolean, func(*projAccountV2) bool { return true })
	projection.Field(p, "rank_no", projection.Integer, func(*projAccountV2) int64 { return 0 })
	// Its listeners and type changed: the declaration's fingerprint differs,
	// and the change is accepted (the stored read models stay as they are).
	if _, err := projection.Open(ctx, r.e, p); !errors.Is(err, projection.ErrDeclarationChanged) {
		t.Fatalf("projection.Open of the changed declaration = %v, want ErrDeclarationChanged", err)
	}
	if err := projection.Accept(ctx, r.e, p); err != nil {
		t.Fatalf("projection.Accept: %v", err)
	}
	st, err := projection.Open(ctx, r.e, p)
	if err != nil {
		t.Fatalf("projection.Open of the changed read model: %v", err)
	}
	got, ok, err := st.Get(ctx, "v-1")
	if err != nil || !ok || got.Currency != "EUR" || got.Balance != "2.00" || got.IBAN == nil || *got.IBAN != "DE21" {
		t.Fatalf("v-1 under the changed type = %+v, %v, %v; want currency EUR (init), balance 2.00, iban DE21", got, ok, err)
	}
	opts, err := st.Options(consumer.EventStore(r.s, r.adv))
	if err != nil {
		t.Fatalf("Options: %v", err)
	}
	opts.PollInterval = 20 * time.Millisecond
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	run, err := consumer.NewRunner(rctx, consumer.NewRegistry(r.e, nil), opts)
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = run.Run(rctx) }()
	r.append(t, "bank.Account", "v-1", projDeposited{"1"})
	waitFor(t, "v-1 saved by the changed type", func() bool {
		v, _, err := st.Get(ctx, "v-1")
		return err == nil && v.Deposits == 2
	})
	rec, err := st.Topic().Latest(ctx, r.e.DB, "v-1")
	if err != nil || !strings.Contains(string(rec.Payload), `"currency":"EUR"`) || strings.Contains(string(rec.Payload), `"rank"`) {
		t.Errorf("v-1's latest state %s (%v): want the new shape (currency, no rank)", rec.Payload, err)
	}
}

// failureCounter is a slog handler counting the runner's "message failed"
// records (a failure that spends the message's budget).
type failureCounter struct {
	mu     sync.Mutex
	n      int
	reason string
}

func (f *failureCounter) Enabled(context.Context, slog.Level) bool { return true }

func (f *failureCounter) Handle(_ context.Context, r slog.Record) error {
	if !strings.HasPrefix(r.Message, "message failed") {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n++
	if f.reason == "" {
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "reason" {
				f.reason = a.Value.String()
			}
			return true
		})
	}
	return nil
}

func (f *failureCounter) WithAttrs([]slog.Attr) slog.Handler { return f }
func (f *failureCounter) WithGroup(string) slog.Handler      { return f }

func (f *failureCounter) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.n
}

func (f *failureCounter) firstReason() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.reason
}
