package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/eventstore"
	"github.com/tidemarkdb/tidemark/internal/sqlcount"
)

var flagGroupTrace = flag.Bool("group-trace", false, "run only the group-commit trace: statements per transaction and the client's time in each, 16 writers, group commit on vs the baseline")

// groupTrace shows where a group commit's time goes: 16 writers of
// single-event appends through a counting, timing driver wrapper, first the
// baseline, then group commit on; for each statement text, the calls per
// transaction (per batch for group commit) and the mean wall time of one
// call in the driver (a round trip plus the server's work).
func groupTrace(ctx context.Context, cat dialect.Catalogue, driver, dsn string) error {
	counts := sqlcount.Counts{ByText: true, Timed: true}
	db, err := sqlcount.Open(driver, dsn, &counts)
	if err != nil {
		return err
	}
	b, err := newBenchDB(ctx, cat, driver, db)
	if err != nil {
		return err
	}
	defer b.close()
	on := eventstore.New(b.e, b.adv, eventstore.WithGroupCommit(true))
	const writers = 16
	hot := newStreamPool("h", writers, -1)
	dur := 3 * *flagCell
	for _, side := range []struct {
		name string
		run  func(context.Context, *rand.Rand) error
	}{
		{"baseline", func(ctx context.Context, _ *rand.Rand) error { return b.baselineTx(ctx, 1) }},
		{"group commit on", storeAppend(on)},
		{"group commit on, exact versions", newStreamPool("x", 16*100, -1).run(on, true)},
		// The exact cells' shape: 16 streams, one per writer, hot.
		{"group commit on, Any, 16 streams", hot.run(on, false)},
		{"group commit on, exact versions, 16 streams", hot.run(on, true)},
	} {
		_, _ = timedRate(ctx, writers, 1, side.run) // warm-up: statements prepared on every connection
		counts.ResetTexts()
		before := on.GroupCommitStats()
		saved := *flagCell
		*flagCell = dur
		rate, lat := timedRate(ctx, writers, 1, side.run)
		*flagCell = saved
		after := on.GroupCommitStats()
		p := percentiles(lat, 0.5, 0.99)
		txs := float64(len(lat))
		if n := after.Batches - before.Batches; n > 0 {
			txs = float64(n)
		}
		fmt.Printf("   %d writers, %s: %.0f ev/s, p50 %s p99 %s, %.0f transactions (%.1f appends each), load %s\n",
			writers, side.name, rate, ms(p[0]), ms(p[1]), txs, float64(len(lat))/txs, loadAvg())
		for _, t := range counts.Texts() {
			fmt.Printf("      %6.2f per tx  %8.3f ms per call  %s%s\n", float64(t.Count)/txs,
				float64(t.Time.Microseconds())/1000/float64(max(t.Count, 1)), insertRows(t.SQL), shortSQL(t.SQL))
		}
	}
	return nil
}

// insertRows is "N rows " for a multi-row INSERT … VALUES, else "".
func insertRows(q string) string {
	if !strings.HasPrefix(strings.TrimSpace(q), "INSERT") {
		return ""
	}
	return fmt.Sprintf("%2d rows ", strings.Count(q, "), (")+1)
}
