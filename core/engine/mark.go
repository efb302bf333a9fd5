package engine

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/tidemarkdb/tidemark/core/dialect"
)

// MarkRow is a topic's row of the high-water-mark store.
type MarkRow struct {
	Mark           int64
	PendingEnd     sql.NullInt64
	PendingHorizon sql.NullInt64
	Owner          sql.NullString
}

// ReadMarkRow is the one reader of a topic's mark row (the advancer and the
// event store's readers both use it). A missing row is sql.ErrNoRows,
// wrapped with the topic.
func (e *Engine) ReadMarkRow(ctx context.Context, q Querier, topic string) (MarkRow, error) {
	var r MarkRow
	err := e.QueryRow(ctx, q, dialect.HWMRead, nil, map[string]any{"topic": topic}).Scan(&r.Mark, &r.PendingEnd, &r.PendingHorizon, &r.Owner)
	if err != nil {
		return r, fmt.Errorf("reading high-water mark of %s: %w", topic, err)
	}
	return r, nil
}

// SeedMark inserts the mark row of topic at 0 unless it exists.
func (e *Engine) SeedMark(ctx context.Context, q Querier, topic string) error {
	if err := e.seedExec(ctx, q, dialect.HWMSeed, nil, map[string]any{"topic": topic}); err != nil {
		return fmt.Errorf("seeding high-water mark of %s: %w", topic, err)
	}
	return nil
}
