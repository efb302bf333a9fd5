package log

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/tidemarkdb/tidemark/core/engine"

	_ "modernc.org/sqlite"
)

// TestPageRoomFollowsTheRange: a page makes room for the positions between
// its start and the mark, not for its limit. A consumer keeping up reads a
// record or two per poll with a limit of thousands; room for the limit was
// megabytes per poll, and the collections that followed were the runner's
// latency tail.
func TestPageRoomFollowsTheRange(t *testing.T) {
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "p.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const after, mark, limit = 100, 102, 5000
	s := Source[int64]{
		Begin: func(ctx context.Context) (*sql.Tx, error) { return db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true}) },
		Mark:  func(context.Context, engine.Querier, int64) (int64, error) { return mark, nil },
		Range: func(_ context.Context, _ engine.Querier, _ int, after, upto int64, _ int, each func(int64) error) error {
			for p := after + 1; p <= upto; p++ {
				if err := each(p); err != nil {
					return err
				}
			}
			return nil
		},
		Position: func(p int64) int64 { return p },
		Err:      func(err error) error { return err },
	}
	page, got, err := s.Page(context.Background(), -1, after, limit)
	if err != nil {
		t.Fatal(err)
	}
	if got != mark || len(page) != mark-after {
		t.Fatalf("Page = %v below %d, want positions %d..%d below %d", page, got, after+1, mark, mark)
	}
	if cap(page) > mark-after {
		t.Errorf("a page of %d records made room for %d (limit %d)", len(page), cap(page), limit)
	}
	up, err := s.UpTo(context.Background(), -1, after, mark, limit)
	if err != nil {
		t.Fatal(err)
	}
	if len(up) != mark-after || cap(up) > mark-after {
		t.Errorf("UpTo: %d records in room for %d, want %d in at most %d", len(up), cap(up), mark-after, mark-after)
	}
}

func TestPresize(t *testing.T) {
	cases := []struct {
		after, upto int64
		limit, want int
	}{
		{10, 12, 5000, 2},
		{10, 10, 5000, 0},
		{10, 5, 5000, 0},
		{-1, 1 << 62, 5000, 5000},
		{-1, 1<<63 - 1, 5000, 5000}, // the range overflows int64
		{0, 1 << 40, 1 << 30, maxPresize},
		{0, 100, 0, 0},
	}
	for _, c := range cases {
		if got := presize(c.after, c.upto, c.limit); got != c.want {
			t.Errorf("presize(%d, %d, %d) = %d, want %d", c.after, c.upto, c.limit, got, c.want)
		}
	}
}
