package conformance

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tidemarkdb/tidemark/core/eventstore"
	"github.com/tidemarkdb/tidemark/core/hwm"
	"github.com/tidemarkdb/tidemark/core/projection"
)

// Sizes of testFinderRangeReadsFlat.
const (
	fewModels  = 500
	manyModels = 10_000
)

// testFinderRangeReadsFlat: a finder's page over a range of a query field
// (rank_no ≥ 3, in rank order, 20 per page; the second page through its
// cursor) reads about as much on the server for 500 read models as for
// 10,000: the field's index serves the range and the order. An ORDER BY
// that puts NULLs last with a CASE, or a cursor condition OR-ed with
// "IS NULL", reads and sorts every match instead.
func testFinderRangeReadsFlat(t T, env *Env) {
	probe := readProbeFor(env)
	if probe == nil {
		skipf(t, "no counter of the rows the server reads is known for %s (driver %s)", env.Catalogue.Identity.Name, env.Driver)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	r := newProjRig(t, env)
	loaded := 0
	reads := map[int][2]int64{}
	for _, n := range []int{fewModels, manyModels} {
		loadQueryRows(ctx, t, r, loaded, n)
		loaded = n
		settleStatistics(ctx, t, env, r.st.Table())
		q := projection.Query{Where: []projection.Cond{projection.Ge("rank_no", 3)}, OrderBy: "rank_no", Limit: 20}
		first, err := r.st.Find(ctx, q)
		if err != nil || len(first.Items) != 20 {
			t.Fatalf("first page over %d read models: %d items, %v", n, len(first.Items), err)
		}
		var got [2]int64
		for i, page := range []projection.Query{q, {Where: q.Where, OrderBy: q.OrderBy, Limit: q.Limit, After: first.Next}} {
			stmts, err := r.st.Statements(page)
			if err != nil {
				t.Fatal(err)
			}
			read, err := probe(ctx, r.e.DB, stmts[0].SQL, stmts[0].Args)
			if err != nil {
				t.Fatalf("counting what page %d reads: %v\n%s", i+1, err, stmts[0].SQL)
			}
			got[i] = read
		}
		reads[n] = got
		t.Logf("%d read models: the first page read %d, the second %d", n, got[0], got[1])
	}
	for i := range 2 {
		few, many := reads[fewModels][i], reads[manyModels][i]
		// Flat: less than one read more per 100 models added (a sort of
		// every match reads one more per model, or per ~40 in pages).
		if grown := many - few; grown*100 > manyModels-fewModels {
			if env.Catalogue.Identity.Name == "hsqldb" {
				skipf(t, "HSQLDB's plan (EXPLAIN PLAN FOR) reads the range through the spec's index on the field alone and sorts it for ORDER BY field, key (no \"uses index\" order): page %d counted %d over %d read models and %d over %d",
					i+1, many, manyModels, few, fewModels)
			}
			if env.Catalogue.Identity.Name == "h2" {
				skipf(t, "H2 does not serve ORDER BY field, key from the spec's index on the field alone (idx_<table>_<column>): page %d read %d over %d read models and %d over %d; an application's own index on (field, read_model_id) serves it",
					i+1, many, manyModels, few, fewModels)
			}
			stmts, _ := r.st.Statements(projection.Query{Where: []projection.Cond{projection.Ge("rank_no", 3)}, OrderBy: "rank_no", Limit: 20})
			t.Errorf("page %d read %d over %d read models and %d over %d: the finder reads every match (want the field's index to serve the range and the order)\n%s",
				i+1, many, manyModels, few, fewModels, stmts[0].SQL)
		}
	}
}

// loadQueryRows writes query rows from..n-1 straight into the projection's
// query table (no message: a model's state is then its init value), each
// with its own rank (a page in rank order then breaks no ties: within a
// tie the key order is sorted, which reads the whole tie), in one
// transaction.
func loadQueryRows(ctx context.Context, t T, r *projRig, from, n int) {
	t.Helper()
	tx, err := r.e.DB.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	ins, err := r.e.CompileText("INSERT INTO "+r.st.Table()+" (read_model_id, message_id, rank_no) VALUES (#{id}, #{msg}, #{rank})", nil)
	if err != nil {
		t.Fatal(err)
	}
	stmt, err := tx.PrepareContext(ctx, ins.SQL)
	if err != nil {
		t.Fatal(err)
	}
	defer stmt.Close()
	for i := from; i < n; i++ {
		args, err := ins.Args(map[string]any{"id": fmt.Sprintf("m-%06d", i), "msg": fmt.Sprintf("00000000-0000-4000-8000-%012d", i), "rank": int64(i)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := stmt.ExecContext(ctx, args...); err != nil {
			t.Fatalf("query row %d: %v", i, err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

// settleStatistics gives the planner the statistics a table of this size
// has in steady state (PostgreSQL's autovacuum analyzes it after this many
// inserts, on its own time); other engines plan without such a step.
func settleStatistics(ctx context.Context, t T, env *Env, table string) {
	t.Helper()
	if env.Driver != "pgx" && env.Driver != "postgres" {
		return
	}
	if _, err := env.DB.ExecContext(ctx, "ANALYZE "+table); err != nil {
		t.Fatalf("ANALYZE %s: %v", table, err)
	}
}

// finderName is the projection of the typed finders' tests: the account
// projection's events and read model, on a query table of its own with a
// field of every kind (the fixture table has no TIME column).
const finderName = "acct-find"

// finderFields are the typed handles of finderProjection's fields.
type finderFields struct {
	iban       projection.UniqueColumn[projAccount, *string]
	balance    projection.Column[projAccount, string]
	openedOn   projection.Column[projAccount, *time.Time]
	openedTime projection.Column[projAccount, *time.Time]
	openedAt   projection.Column[projAccount, *time.Time]
	active     projection.Column[projAccount, bool]
	rank       projection.Column[projAccount, int64]
	deposits   projection.Column[projAccount, int]
}

// finderProjection declares finderName with the fixture table's decimal
// digits on env's engine, and returns its handles.
func finderProjection(env *Env) (*projection.Projection[projAccount], finderFields) {
	dec := env.Features.fixtureQueryTable().Fields[1]
	p := accountListeners(projection.New(finderName, func(string) projAccount { return projAccount{Balance: "0"} }), nil)
	return p, finderFields{
		iban:       projection.UniqueField(p, "iban", projection.Text, func(s *projAccount) *string { return s.IBAN }),
		balance:    projection.Field(p, "balance", projection.Decimal, func(s *projAccount) string { return s.Balance }, projection.Digits(dec.Precision, dec.Scale)),
		openedOn:   projection.Field(p, "opened_on", projection.Date, openedAt),
		openedTime: projection.Field(p, "opened_time", projection.Time, openedAt),
		openedAt:   projection.Field(p, "opened_at", projection.Instant, openedAt),
		active:     projection.Field(p, "active", projection.Boolean, func(s *projAccount) bool { return s.Active }),
		rank:       projection.Field(p, "rank_no", projection.Integer, func(s *projAccount) int64 { return s.Rank }),
		deposits:   projection.Field(p, "deposits", projection.Integer, func(s *projAccount) int { return s.Deposits }),
	}
}

// newFinderRig opens the engine with the fixture table and finderName's,
// and returns the account projection's rig and finderName's (one engine,
// event store and advancer), with its handles.
func newFinderRig(t T, env *Env) (*projRig, *projRig, finderFields) {
	p, f := finderProjection(env)
	cfg := defaultConfig(env)
	cfg.QueryTables = append(cfg.QueryTables, p.QueryTable())
	e := openEngine(t, env, cfg)
	ctx, stop := context.WithCancel(context.Background())
	t.Cleanup(stop)
	adv := hwm.New(e, hwm.Options{PollInterval: 10 * time.Millisecond})
	go func() { _ = adv.Run(ctx) }()
	acc := &projRig{e: e, s: eventstore.New(e, adv), adv: adv}
	var err error
	if acc.st, err = projection.Open(ctx, e, accountProjection(env)); err != nil {
		t.Fatalf("projection.Open(account-summary): %v", err)
	}
	fr := &projRig{e: e, s: acc.s, adv: adv}
	if fr.st, err = projection.Open(ctx, e, p); err != nil {
		t.Fatalf("projection.Open(%s): %v", finderName, err)
	}
	return acc, fr, f
}

// finderBase is the first account's opening time: nanoseconds, which
// every time kind cuts (to its date, time of day, microseconds).
var finderBase = time.Date(2026, 3, 4, 5, 6, 7, 123456789, time.UTC)

// findKeys pages q (Limit per page) to its end through the cursor's text
// and returns the keys in order.
func findKeys(t T, st *projection.Store[projAccount], what string, q projection.Query) []string {
	t.Helper()
	var keys []string
	for pages := 0; ; pages++ {
		if pages > 50 {
			t.Fatalf("%s: pages do not end", what)
		}
		page, err := st.Find(context.Background(), q)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if q.Limit > 0 && len(page.Items) > q.Limit {
			t.Fatalf("%s: a page of %d items, the limit is %d", what, len(page.Items), q.Limit)
		}
		keys = append(keys, keysOf(page.Items)...)
		if page.Next.Done() {
			return keys
		}
		if q.After, err = projection.ParseCursor(page.Next.String()); err != nil {
			t.Fatalf("%s: ParseCursor: %v", what, err)
		}
	}
}

// finderAt is finderBase moved by d.
func finderAt(d time.Duration) *time.Time {
	t := finderBase.Add(d)
	return &t
}

func strPtr(s string) *string { return &s }

// pKeys are p-from … p-to, descending when from > to.
func pKeys(from, to int) []string {
	var out []string
	for i := from; ; {
		out = append(out, fmt.Sprintf("p-%02d", i))
		if i == to {
			return out
		}
		if from < to {
			i++
		} else {
			i--
		}
	}
}

// loadFinderModels appends the events of the typed finders' read models
// and waits until r's store applied them: a-1 (DE01, finderBase, rank 3,
// 10.75 in two deposits), a-2 (DE02, two days later, rank 1, 100), a-3 (no
// IBAN, an hour later, rank 2, 20.50), other (never opened: NULL times,
// inactive, rank 0, 1.00) and p-00 … p-11 (P00 …, three days and
// (i+1)·10 minutes later, rank 10+i, i.50).
func loadFinderModels(t T, r *projRig) {
	r.append(t, "bank.Account", "a-1", projOpened{IBAN: "DE01", OpenedAt: finderBase, Rank: 3}, projDeposited{"9.50"}, projDeposited{"1.25"})
	r.append(t, "bank.Account", "a-2", projOpened{IBAN: "DE02", OpenedAt: *finderAt(48 * time.Hour), Rank: 1}, projDeposited{"100"})
	r.append(t, "bank.Account", "a-3", projOpened{OpenedAt: *finderAt(time.Hour), Rank: 2}, projDeposited{"20.5"})
	r.append(t, "bank.Account", "other", projDeposited{"1"})
	for i := range 12 {
		r.append(t, "bank.Account", fmt.Sprintf("p-%02d", i), projOpened{IBAN: fmt.Sprintf("P%02d", i),
			OpenedAt: *finderAt(72*time.Hour + time.Duration(i+1)*10*time.Minute), Rank: int64(10 + i)}, projDeposited{fmt.Sprintf("%d.5", i)})
	}
	r.run(t, nil)
	r.waitDeposits(t, "a-1", 2)
	for _, k := range append([]string{"a-2", "a-3", "other"}, pKeys(0, 11)...) {
		r.waitDeposits(t, k, 1)
	}
}

// testTypedFindersEveryKind: conditions made by typed handles (Field,
// UniqueField) find by every query-field kind (times given with
// nanoseconds, decimals compared as numbers): equality, ranges paged
// through the cursor's text in both directions (ties by key), IN, Count,
// and FindBy on the unique field.
func testTypedFindersEveryKind(t T, env *Env) {
	_, r, f := newFinderRig(t, env)
	ctx := context.Background()
	loadFinderModels(t, r)
	type q = projection.Query
	type w = []projection.Cond
	cases := []struct {
		what string
		q    q
		want []string
	}{
		{"text =", q{Where: w{f.iban.Eq(strPtr("DE01"))}}, []string{"a-1"}},
		{"decimal = (10.750)", q{Where: w{f.balance.Eq("10.750")}}, []string{"a-1"}},
		{"date = (its date, by rank)", q{Where: w{f.openedOn.Eq(finderAt(2 * time.Hour))}, OrderBy: f.rank.Name()}, []string{"a-3", "a-1"}},
		{"time = (its time of day, cut)", q{Where: w{f.openedTime.Eq(finderAt(48 * time.Hour))}}, []string{"a-1", "a-2"}},
		{"instant = (cut)", q{Where: w{f.openedAt.Eq(finderAt(0))}}, []string{"a-1"}},
		{"boolean =", q{Where: w{f.active.Eq(false)}}, []string{"other"}},
		{"bigint = (int64)", q{Where: w{f.rank.Eq(2)}}, []string{"a-3"}},
		{"bigint = (int)", q{Where: w{f.deposits.Eq(2)}}, []string{"a-1"}},
		{"<>, IS NULL", q{Where: w{f.rank.Ne(0), f.iban.IsNull()}}, []string{"a-3"}},
		{"instant range ascending, pages of 3", q{Where: w{f.openedAt.Gt(finderAt(0)), f.openedAt.Le(finderAt(73 * time.Hour))}, OrderBy: f.openedAt.Name(), Limit: 3},
			append([]string{"a-3", "a-2"}, pKeys(0, 5)...)},
		{"instant range descending, pages of 3", q{Where: w{f.openedAt.Gt(finderAt(0)), f.openedAt.Le(finderAt(73 * time.Hour))}, OrderBy: f.openedAt.Name(), Desc: true, Limit: 3},
			append(pKeys(5, 0), "a-2", "a-3")},
		{"decimal range descending (numeric order), pages of 4", q{Where: w{f.balance.Ge("5")}, OrderBy: f.balance.Name(), Desc: true, Limit: 4},
			[]string{"a-2", "a-3", "p-11", "a-1", "p-10", "p-09", "p-08", "p-07", "p-06", "p-05"}},
		{"time range (a tie by key), pages of 4", q{Where: w{f.openedTime.Ge(finderAt(72*time.Hour + 35*time.Minute))}, OrderBy: f.openedTime.Name(), Limit: 4},
			append([]string{"p-03", "p-04", "a-3"}, pKeys(5, 11)...)},
		{"date range descending", q{Where: w{f.openedOn.Lt(finderAt(72 * time.Hour))}, OrderBy: f.openedOn.Name(), Desc: true, Limit: 2}, []string{"a-2", "a-3", "a-1"}},
		{"bigint range descending, pages of 5", q{Where: w{f.rank.Ge(10), f.rank.Lt(21)}, OrderBy: f.rank.Name(), Desc: true, Limit: 5}, pKeys(10, 0)},
		{"int range (ties by key), pages of 4", q{Where: w{f.deposits.Le(1)}, OrderBy: f.deposits.Name(), Limit: 4}, append([]string{"a-2", "a-3", "other"}, pKeys(0, 11)...)},
		{"text range descending, pages of 3", q{Where: w{f.iban.Ge(strPtr("P05"))}, OrderBy: f.iban.Name(), Desc: true, Limit: 3}, pKeys(11, 5)},
		{"text IN", q{Where: w{f.iban.In(strPtr("DE01"), strPtr("P03"), strPtr("none"))}}, []string{"a-1", "p-03"}},
		{"decimal IN", q{Where: w{f.balance.In("10.75", "100")}}, []string{"a-1", "a-2"}},
		{"date IN", q{Where: w{f.openedOn.In(finderAt(0), finderAt(48*time.Hour))}, OrderBy: f.rank.Name()}, []string{"a-2", "a-3", "a-1"}},
		{"time IN", q{Where: w{f.openedTime.In(finderAt(0), finderAt(72*time.Hour+20*time.Minute))}}, []string{"a-1", "a-2", "p-01"}},
		{"instant IN", q{Where: w{f.openedAt.In(finderAt(time.Hour), finderAt(72*time.Hour+10*time.Minute))}}, []string{"a-3", "p-00"}},
		{"boolean IN", q{Where: w{f.active.In(false)}}, []string{"other"}},
		{"bigint IN", q{Where: w{f.rank.In(1, 3, 11)}}, []string{"a-1", "a-2", "p-01"}},
		{"int IN", q{Where: w{f.deposits.In(2)}}, []string{"a-1"}},
		{"IN of none", q{Where: w{f.rank.In()}}, nil},
	}
	for _, c := range cases {
		if got := findKeys(t, r.st, c.what, c.q); fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%s: %v, want %v", c.what, got, c.want)
		}
	}
	counts := []struct {
		what  string
		where []projection.Cond
		want  int64
	}{
		{"active, rank >= 2", []projection.Cond{f.active.Eq(true), f.rank.Ge(2)}, 14},
		{"iban IS NULL", []projection.Cond{f.iban.IsNull()}, 2},
		{"iban NOT NULL", []projection.Cond{f.iban.NotNull()}, 14},
		{"opened_at IS NULL", []projection.Cond{f.openedAt.IsNull()}, 1},
		{"opened_on NOT NULL, balance < 10.75", []projection.Cond{f.openedOn.NotNull(), f.balance.Lt("10.75")}, 11},
	}
	for _, c := range counts {
		if n, err := r.st.Count(ctx, c.where...); err != nil || n != c.want {
			t.Errorf("Count(%s) = %d, %v; want %d", c.what, n, err, c.want)
		}
	}
	checkFindBy(t, r.st, f)
}

// checkFindBy looks read models up by the unique handle.
func checkFindBy(t T, st *projection.Store[projAccount], f finderFields) {
	t.Helper()
	ctx := context.Background()
	if it, ok, err := projection.FindBy(ctx, st, f.iban, strPtr("DE02")); err != nil || !ok || it.Key != "a-2" || it.Value.Balance != "100.00" || it.Value.Rank != 1 {
		t.Errorf("FindBy(iban DE02) = %+v, %v, %v; want a-2 (balance 100.00, rank 1)", it, ok, err)
	}
	if it, ok, err := projection.FindBy(ctx, st, f.iban, strPtr("XX99")); err != nil || ok {
		t.Errorf("FindBy(iban XX99) = %+v, %v, %v; want none", it, ok, err)
	}
	var ve *projection.ValueError
	if _, _, err := projection.FindBy(ctx, st, f.iban, nil); !errors.As(err, &ve) {
		t.Errorf("FindBy(iban nil) = %v; want a *ValueError (IsNull finds a missing value)", err)
	}
	if it, ok, err := st.FindUnique(ctx, f.iban.Name(), "P07"); err != nil || !ok || it.Key != "p-07" {
		t.Errorf("FindUnique(%s, P07) = %+v, %v, %v; want p-07", f.iban.Name(), it, ok, err)
	}
}

// testTypedFinderForeignHandle: a typed handle of one projection used on
// another projection's store is refused (*ForeignColumnError, wrapping
// ErrUnknownColumn) by Find, Count, Statements and FindBy, although that
// store has a column of the same name and type holding a match; on its own
// store the handle finds. A handle from another declaration under the
// store's name is that projection's.
func testTypedFinderForeignHandle(t T, env *Env) {
	acc, fr, f := newFinderRig(t, env)
	ctx := context.Background()
	acc.append(t, "bank.Account", "a-1", projOpened{IBAN: "DE01", OpenedAt: finderBase, Rank: 3}, projDeposited{"1"})
	acc.run(t, nil)
	fr.run(t, nil)
	acc.waitDeposits(t, "a-1", 1)
	fr.waitDeposits(t, "a-1", 1)
	if page, err := acc.st.Find(ctx, projection.Query{Where: []projection.Cond{projection.Eq("rank_no", 3)}}); err != nil || fmt.Sprint(keysOf(page.Items)) != "[a-1]" {
		t.Fatalf("account-summary, rank_no = 3 by name: %v, %v; want [a-1]", keysOf(page.Items), err)
	}
	refused := func(what string, err error) {
		t.Helper()
		var fe *projection.ForeignColumnError
		if !errors.As(err, &fe) || fe.Store != "account-summary" || fe.Projection != finderName ||
			!errors.Is(err, projection.ErrForeignColumn) || !errors.Is(err, projection.ErrUnknownColumn) {
			t.Errorf("%s with %s's handle on account-summary's store: %v; want a *ForeignColumnError (ErrForeignColumn, ErrUnknownColumn)", what, finderName, err)
		}
	}
	page, err := acc.st.Find(ctx, projection.Query{Where: []projection.Cond{f.rank.Eq(3)}})
	refused("Find", err)
	if len(page.Items) != 0 {
		t.Errorf("Find with a foreign handle returned %v", keysOf(page.Items))
	}
	_, err = acc.st.Count(ctx, f.iban.NotNull())
	refused("Count", err)
	_, err = acc.st.Statements(projection.Query{Where: []projection.Cond{f.active.Eq(true)}})
	refused("Statements", err)
	_, _, err = projection.FindBy(ctx, acc.st, f.iban, strPtr("DE01"))
	refused("FindBy", err)

	if page, err := fr.st.Find(ctx, projection.Query{Where: []projection.Cond{f.rank.Eq(3)}}); err != nil || fmt.Sprint(keysOf(page.Items)) != "[a-1]" {
		t.Errorf("%s, its own handle rank_no = 3: %v, %v; want [a-1]", finderName, keysOf(page.Items), err)
	}
	if it, ok, err := projection.FindBy(ctx, fr.st, f.iban, strPtr("DE01")); err != nil || !ok || it.Key != "a-1" {
		t.Errorf("%s, FindBy(its iban DE01) = %+v, %v, %v; want a-1", finderName, it, ok, err)
	}
	own := projection.UniqueField(projection.New[projAccount]("account-summary", nil), "iban", projection.Text, func(s *projAccount) *string { return s.IBAN })
	if it, ok, err := projection.FindBy(ctx, acc.st, own, strPtr("DE01")); err != nil || !ok || it.Key != "a-1" {
		t.Errorf("account-summary, FindBy(a handle declared under its name, DE01) = %+v, %v, %v; want a-1", it, ok, err)
	}
}
