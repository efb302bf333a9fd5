package projection

import (
	"context"
	"time"

	"github.com/tidemarkdb/tidemark/core/topic"
)

// Compaction is how the runner Options builds compacts the projection's
// read-model topic (json-projections: superseded messages deleted shortly
// after a newer one commits, every minute by default, outside the apply).
// The zero value compacts every topic.DefaultCompactionInterval, first one
// interval after the runner starts, in the one process that holds the
// topic's compaction lease, with tombstones kept (retention is on only with
// TombstoneMaxAge).
type Compaction struct {
	topic.CompactorOptions
	// Disabled leaves compaction to the application (topic.NewCompactor)
	// or to `tidemark projections compact`.
	Disabled bool
}

// SetCompaction sets how the runners of later Options calls compact the
// projection's topic. Call it before Options.
func (s *Store[S]) SetCompaction(c Compaction) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.compaction = c
}

// compactor is the companion task that compacts s's topic while its
// runner runs, or nil when there is nothing to compact (no topic, a
// read-only engine, compaction disabled). Its options are checked here,
// before the runner exists: a bad one is the caller's error.
func (s *Store[S]) compactor() (func(ctx context.Context) error, error) {
	s.mu.Lock()
	c := s.compaction
	s.mu.Unlock()
	if c.Disabled || s.topic == nil || s.e.ReadOnly() {
		return nil, nil
	}
	cp, err := topic.NewCompactor(s.topic, c.CompactorOptions)
	if err != nil {
		return nil, err
	}
	interval := c.Interval
	if interval == 0 {
		interval = topic.DefaultCompactionInterval
	}
	return func(ctx context.Context) error {
		// The first compaction one interval after the start: a runner
		// restarted often does not compact at every start.
		t := time.NewTimer(interval)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		return cp.Run(ctx)
	}, nil
}
