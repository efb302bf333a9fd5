package main

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/dialect/plugin"
	"github.com/tidemarkdb/tidemark/plugins/builtin"
)

func sqliteBench(t *testing.T, ctx context.Context, cat dialect.Catalogue, name string) *bench {
	t.Helper()
	dsn := "file:" + filepath.Join(t.TempDir(), name) + "?_pragma=busy_timeout(10000)&_txlock=immediate"
	b, err := newBench(ctx, cat, "sqlite", dsn)
	if err != nil {
		t.Fatalf("newBench: %v", err)
	}
	return b
}

// A bench built where a closed one lived (same address, as the allocator
// may hand out) prepares its own baseline statement: the cache was keyed
// by the bench's address and returned the closed database's statement
// ("Tx.Stmt: statement from different database used").
func TestBaselineStatementBelongsToItsBench(t *testing.T) {
	ctx := context.Background()
	d, ok := builtin.Lookup("sqlite")
	if !ok {
		t.Fatal("no built-in sqlite dialect")
	}
	loaded, err := plugin.InProcess(ctx, d)
	if err != nil {
		t.Fatal(err)
	}
	b := sqliteBench(t, ctx, loaded.Catalogue, "first.db")
	if err := b.baselineTx(ctx, 3); err != nil {
		t.Fatalf("first bench: %v", err)
	}
	b.close()
	// The next cell's bench at the same address.
	nb := sqliteBench(t, ctx, loaded.Catalogue, "second.db")
	b.driver, b.db, b.e, b.store, b.adv = nb.driver, nb.db, nb.e, nb.store, nb.adv
	defer b.close()
	if err := b.baselineTx(ctx, 3); err != nil {
		t.Fatalf("second bench at the first one's address: %v", err)
	}
	var n int
	if err := b.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+baselineTable).Scan(&n); err != nil || n != 3 {
		t.Fatalf("second database holds %d baseline rows (%v), want 3", n, err)
	}
}
