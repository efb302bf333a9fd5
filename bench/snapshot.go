package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/eventstore"
)

// snapshotCost compares the catch-up rate of Follow, which reads each page
// with its own mark in one read-only transaction (the snapshot-safe path),
// with the path it replaced: the mark read once on the pool, then every
// page on whatever connection the pool hands out, no transaction. The old
// path is rebuilt here from the engine's public calls, statement for
// statement, over the events readComparison stored.
func (b *bench) snapshotCost(ctx context.Context, n int) error {
	var ratios []float64
	var safeRate, oldRate float64
	for r := 0; r < *flagRounds; r++ {
		start := time.Now()
		old, err := b.markOnceCatchUp(ctx, n)
		if err != nil {
			return err
		}
		o := float64(old) / time.Since(start).Seconds()
		start = time.Now()
		got := 0
		errDone := errors.New("caught up")
		err = b.store.Follow(ctx, 0, eventstore.FollowOptions{PageSize: *flagPage}, func(eventstore.Recorded) error {
			if got++; got == old {
				return errDone
			}
			return nil
		})
		if !errors.Is(err, errDone) {
			return err
		}
		s := float64(got) / time.Since(start).Seconds()
		ratios = append(ratios, s/o)
		safeRate, oldRate = safeRate+s, oldRate+o
	}
	k := float64(*flagRounds)
	fmt.Printf("   read    snapshot-safe catch-up (mark and page in one read-only tx per page) vs mark-once pool reads: %8.0f ev/s vs %8.0f ev/s  ratio %s\n",
		safeRate/k, oldRate/k, summary(ratios))
	return nil
}

// markOnceCatchUp is the replaced Follow's drain: one mark read, then pages
// of (after, mark] on the pool, each row scanned as Follow scans it.
func (b *bench) markOnceCatchUp(ctx context.Context, want int) (int, error) {
	mark, err := b.store.Mark(ctx)
	if err != nil {
		return 0, err
	}
	table := map[string]string{"event_store_table": b.e.Names.Shared["event_store_table"]}
	after, got := int64(0), 0
	for after < mark && got < want {
		rows, err := b.e.Query(ctx, b.e.DB, dialect.EventRange, table, map[string]any{"after": after, "upto": mark, "limit": *flagPage})
		if err != nil {
			return got, err
		}
		// The old ReadUpTo returned the page as a slice, then Follow
		// delivered it: build it the same way.
		var page []eventstore.Recorded
		for rows.Next() {
			var r eventstore.Recorded
			var id engine.UUIDText
			var at engine.UTCTime
			var part int64
			if err := rows.Scan(&id, &r.AggregateID, &r.AggregateType, &r.SequenceNo, &r.Type, &r.Revision,
				&r.Payload, &r.Metadata, &at, &part, &r.GlobalPosition); err != nil {
				rows.Close()
				return got, err
			}
			r.ID, r.OccurredAt, r.PartitionKey = string(id), time.Time(at), int(part)
			page = append(page, r)
		}
		if err := rows.Close(); err != nil {
			return got, err
		}
		if err := rows.Err(); err != nil {
			return got, err
		}
		for _, r := range page {
			after = r.GlobalPosition
			got++
		}
		if len(page) < *flagPage {
			after = mark
		}
	}
	if got != want {
		return got, fmt.Errorf("mark-once catch-up read %d events, want %d", got, want)
	}
	return got, nil
}
