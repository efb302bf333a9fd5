package conformance

import (
	"context"
	"fmt"
	"math/big"
	"sort"
	"strings"
	"time"

	"github.com/tidemarkdb/tidemark/core/projection"
)

// handRow is a query row written by hand: its columns hold values the
// read model's state (none: the init value) does not give.
type handRow struct {
	key    string
	rank   *int64
	iban   *string
	bal    *string
	on     *string
	at     *time.Time
	active *bool
}

// handRows are n query rows with NULLs and ties in every column.
func handRows(n int) []handRow {
	base := time.Date(2024, 3, 1, 10, 0, 0, 0, time.UTC)
	rows := make([]handRow, n)
	for i := range rows {
		r := handRow{key: fmt.Sprintf("h-%02d", i)}
		if i%4 != 0 {
			r.rank = handPtr(int64((i * 7) % 5))
		}
		if i%3 != 0 {
			r.iban = handPtr(fmt.Sprintf("IB%02d", (i*11)%23))
		}
		if i%5 != 1 {
			r.bal = handPtr(fmt.Sprintf("%d.%02d", (i*3)%7-3, (i*13)%100))
		}
		if i%6 != 2 {
			r.on = handPtr(fmt.Sprintf("2024-01-%02d", 1+i%9))
		}
		if i%7 != 3 {
			r.at = handPtr(base.Add(time.Duration((i*5)%11) * time.Minute))
		}
		if i%8 != 5 {
			r.active = handPtr(i%2 == 0)
		}
		rows[i] = r
	}
	return rows
}

// handPtr is a pointer to a copy of v.
func handPtr[V any](v V) *V { return &v }

// writeHandRows inserts rows into the projection's query table, without
// messages (each read model's state is then its init value).
func writeHandRows(ctx context.Context, t T, r *projRig, rows []handRow) {
	t.Helper()
	ins, err := r.e.CompileText("INSERT INTO "+r.st.Table()+" (read_model_id, message_id, rank_no, iban, balance, opened_on, opened_at, active) "+
		"VALUES (#{id}, #{msg}, #{rank}, #{iban}, #{bal}, #{on}, #{at}, #{active})", nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, h := range rows {
		args, err := ins.Args(map[string]any{"id": h.key, "msg": fmt.Sprintf("00000000-0000-4000-8000-%012d", i),
			"rank": handValue(h.rank), "iban": handValue(h.iban), "bal": handValue(h.bal), "on": handValue(h.on), "at": handValue(h.at), "active": handValue(h.active)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.e.DB.ExecContext(ctx, ins.SQL, args...); err != nil {
			t.Fatalf("query row %s: %v", h.key, err)
		}
	}
}

// handValue is *p, nil when p is.
func handValue[V any](p *V) any {
	if p == nil {
		return nil
	}
	return *p
}

// handCompare compares a's and b's values in column (0 when equal); has
// reports whether each has one.
func handCompare(column string, a, b handRow) (ha, hb bool, c int) {
	cmp3 := func(x, y int) int { return x - y }
	switch column {
	case "rank_no":
		ha, hb = a.rank != nil, b.rank != nil
		if ha && hb {
			c = cmp3(int(*a.rank), int(*b.rank))
		}
	case "iban":
		ha, hb = a.iban != nil, b.iban != nil
		if ha && hb {
			c = strings.Compare(*a.iban, *b.iban)
		}
	case "balance":
		ha, hb = a.bal != nil, b.bal != nil
		if ha && hb {
			x, _ := new(big.Rat).SetString(*a.bal)
			y, _ := new(big.Rat).SetString(*b.bal)
			c = x.Cmp(y)
		}
	case "opened_on":
		ha, hb = a.on != nil, b.on != nil
		if ha && hb {
			c = strings.Compare(*a.on, *b.on)
		}
	case "opened_at":
		ha, hb = a.at != nil, b.at != nil
		if ha && hb {
			c = a.at.Compare(*b.at)
		}
	case "active":
		ha, hb = a.active != nil, b.active != nil
		if ha && hb && *a.active != *b.active {
			c = map[bool]int{false: -1, true: 1}[*a.active]
		}
	}
	return ha, hb, c
}

// handOrder is rows' keys in q's order: by the column's value (read
// models without one last, by key), ties by key; key order for "".
func handOrder(rows []handRow, q projection.Query, keep func(handRow) bool) []string {
	var sel []handRow
	for _, r := range rows {
		if keep == nil || keep(r) {
			sel = append(sel, r)
		}
	}
	sort.Slice(sel, func(i, j int) bool {
		a, b := sel[i], sel[j]
		ha, hb, c := handCompare(q.OrderBy, a, b)
		switch {
		case q.OrderBy == "" || (!ha && !hb) || (ha && hb && c == 0):
			return (a.key < b.key) != q.Desc
		case ha != hb:
			return ha
		}
		return (c < 0) != q.Desc
	})
	keys := make([]string, len(sel))
	for i, r := range sel {
		keys[i] = r.key
	}
	return keys
}

// pageAll pages through q (its Limit a page) and returns every key read,
// failing when the pages do not end within max pages.
func pageAll(ctx context.Context, t T, st *projection.Store[projAccount], q projection.Query, max int) []string {
	t.Helper()
	return pageAllThen(ctx, t, st, q, max, func() {})
}

// pageAllThen is pageAll calling then after each page.
func pageAllThen(ctx context.Context, t T, st *projection.Store[projAccount], q projection.Query, max int, then func()) []string {
	t.Helper()
	var keys []string
	for pages := 0; ; pages++ {
		if pages > max {
			t.Fatalf("%+v: pages do not end after %d pages (read %v)", q, max, keys)
		}
		page, err := st.Find(ctx, q)
		if err != nil {
			t.Fatalf("Find %+v: %v", q, err)
		}
		keys = append(keys, keysOf(page.Items)...)
		then()
		if page.Next.Done() {
			return keys
		}
		if q.After, err = projection.ParseCursor(page.Next.String()); err != nil {
			t.Fatalf("ParseCursor: %v", err)
		}
	}
}

// testPagesFollowColumnValues: a finder's cursor is the order column's
// stored value, not the value the read model's state gives (here every
// state is the init value: no rank, no IBAN, balance 0): query rows
// written by hand, with NULLs and ties in every column, page in pages of
// 4 in both directions by every kind's column, each row exactly once, in
// the column's order, and the paging ends.
func testPagesFollowColumnValues(t T, env *Env) {
	r := newProjRig(t, env)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	const n = 23
	rows := handRows(n)
	writeHandRows(ctx, t, r, rows)
	for _, col := range []string{"rank_no", "iban", "balance", "opened_on", "opened_at", "active", ""} {
		for _, desc := range []bool{false, true} {
			q := projection.Query{OrderBy: col, Desc: desc, Limit: 4}
			got := pageAll(ctx, t, r.st, q, n+2)
			if want := handOrder(rows, q, nil); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("pages of 4 by %q desc=%v:\n got %v\nwant %v", col, desc, got, want)
			}
		}
	}
	q := projection.Query{Where: []projection.Cond{projection.Ge("rank_no", 1)}, OrderBy: "rank_no", Desc: true, Limit: 3}
	want := handOrder(rows, q, func(h handRow) bool { return h.rank != nil && *h.rank >= 1 })
	if got := pageAll(ctx, t, r.st, q, n+2); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("pages of 3 of rank_no >= 1 desc:\n got %v\nwant %v", got, want)
	}
}
