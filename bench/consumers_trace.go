package main

import (
	"context"
	"fmt"
	"time"

	"github.com/tidemarkdb/tidemark/core/consumer"
)

// ReadMarked forwards to the traced source's ReadMarked (a partition read,
// as the runner makes it without the trace), counted as Read.
func (t *tracedSource) ReadMarked(ctx context.Context, partition int, after, upto int64, limit int) ([]consumer.Message, int64, error) {
	mr, ok := t.SourceOf.(consumer.MarkedReader)
	if !ok {
		return nil, 0, fmt.Errorf("trace: %T reads no marked pages", t.SourceOf)
	}
	start := time.Now()
	ms, mark, err := mr.ReadMarked(ctx, partition, after, upto, limit)
	t.count(len(ms), time.Since(start))
	return ms, mark, err
}

// ReadRangeMarked forwards to the traced source's range read (every
// partition in one statement), counted as one read.
func (t *tracedSource) ReadRangeMarked(ctx context.Context, after, upto int64, limit int) ([]consumer.Message, int64, error) {
	rr, ok := t.SourceOf.(consumer.RangeReader)
	if !ok {
		return nil, 0, fmt.Errorf("trace: %T reads no ranges", t.SourceOf)
	}
	start := time.Now()
	ms, mark, err := rr.ReadRangeMarked(ctx, after, upto, limit)
	t.count(len(ms), time.Since(start))
	return ms, mark, err
}

func (t *tracedSource) count(n int, d time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.reads++
	t.got += n
	t.inRead += d
}
