package topic

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/google/uuid"

	"github.com/tidemarkdb/tidemark/core/lease"
	"github.com/tidemarkdb/tidemark/core/stmt"
)

// DefaultCompactionInterval is how often a Compactor compacts by default
// (the spec's schedule: every minute).
const DefaultCompactionInterval = time.Minute

// CompactionLockPrefix is put before a read-model topic's name to name
// the high-water-mark store row whose lease a Compactor holds: one
// compactor of a topic runs at a time, across processes.
const CompactionLockPrefix = "compact:"

// CompactorOptions configure a Compactor.
type CompactorOptions struct {
	// Interval is the time between compactions (DefaultCompactionInterval
	// when 0).
	Interval time.Duration
	// TombstoneMaxAge turns tombstone retention on (CompactOptions).
	TombstoneMaxAge time.Duration
	// Lease is how long the compaction lease lasts on the database clock
	// (3 × Interval when 0): another process takes over once it lapsed.
	Lease time.Duration
	// Owner names this process in the lease row (default host, pid and a
	// random suffix).
	Owner string
	// Logger receives a failed compaction (slog.Default() when nil): the
	// compactor logs it and tries again at the next interval.
	Logger *slog.Logger
	// OnCompact, when set, is called after each compaction this process
	// ran (held the lease), with its result or error.
	OnCompact func(Compacted, error)
}

// Compactor compacts a read-model topic every interval (Compact) in the
// process that holds the topic's compaction lease, a row of the
// high-water-mark store named CompactionLockPrefix + the topic's name,
// taken under the rule of every lease row (lease.Row: an expiry on the
// database clock, renewed at every interval).
type Compactor struct {
	t    *ReadModelTopic
	opts CompactorOptions
	lock string
}

// NewCompactor returns t's compactor; bad options are refused
// (ErrInvalidCompaction) before any SQL.
func NewCompactor(t *ReadModelTopic, opts CompactorOptions) (*Compactor, error) {
	if opts.Interval < 0 || opts.TombstoneMaxAge < 0 || opts.Lease < 0 {
		return nil, fmt.Errorf("compactor of %s: %w: negative interval, tombstone age or lease", t.name, ErrInvalidCompaction)
	}
	if opts.Interval == 0 {
		opts.Interval = DefaultCompactionInterval
	}
	if opts.Lease == 0 {
		opts.Lease = 3 * opts.Interval
	}
	if opts.Lease <= opts.Interval {
		return nil, fmt.Errorf("compactor of %s: %w: lease %s does not outlast the interval %s", t.name, ErrInvalidCompaction, opts.Lease, opts.Interval)
	}
	if opts.Owner == "" {
		host, _ := os.Hostname()
		opts.Owner = fmt.Sprintf("%s-%d-%s", host, os.Getpid(), uuid.NewString()[:8])
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if t.e.ReadOnly() {
		return nil, fmt.Errorf("compactor of %s: %w: the engine is read-only", t.name, ErrInvalidCompaction)
	}
	return &Compactor{t: t, opts: opts, lock: CompactionLockPrefix + t.name}, nil
}

// Owner is the name this process holds the compaction lease under.
func (c *Compactor) Owner() string { return c.opts.Owner }

// Run compacts every interval while this process holds the lease, until
// ctx ends (then it releases the lease and returns nil). A compaction's
// error (the projection rebuilds, the database is away) is logged and
// reported to OnCompact; the next interval tries again.
func (c *Compactor) Run(ctx context.Context) error {
	if err := c.t.e.SeedMark(ctx, c.t.e.DB, c.lock); err != nil {
		return c.stopped(ctx, fmt.Errorf("compactor of %s: %w", c.t.name, err))
	}
	defer c.row().Release()
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-timer.C:
		}
		c.once(ctx)
		timer.Reset(c.opts.Interval)
	}
}

// stopped is err, or nil when ctx ended (a stop, not a failure).
func (c *Compactor) stopped(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// once takes or renews the lease and, held, compacts.
func (c *Compactor) once(ctx context.Context) {
	held, err := c.row().Held(ctx)
	if err != nil {
		c.report(ctx, Compacted{}, fmt.Errorf("compaction lease of %s: %w", c.t.name, err))
		return
	}
	if !held {
		return
	}
	res, err := c.t.Compact(ctx, CompactOptions{TombstoneMaxAge: c.opts.TombstoneMaxAge})
	c.report(ctx, res, err)
}

func (c *Compactor) report(ctx context.Context, res Compacted, err error) {
	if err != nil && ctx.Err() != nil {
		return // stopping
	}
	if err != nil {
		c.opts.Logger.LogAttrs(ctx, slog.LevelWarn, "read-model topic compaction failed",
			slog.String("topic", c.t.name), slog.Any("error", err), slog.Bool("rebuilding", errors.Is(err, ErrRebuilding)))
	}
	if c.opts.OnCompact != nil {
		c.opts.OnCompact(res, err)
	}
}

// row is the compaction lease, a high-water-mark store row, under the
// rule every lease row follows (lease.Row).
func (c *Compactor) row() lease.Row {
	e := c.t.e
	p := stmt.HWMAcquireParams{Topic: c.lock, Owner: c.opts.Owner, LeaseMillis: c.opts.Lease.Milliseconds()}
	return lease.Row{E: e,
		Take: func(ctx context.Context) (sql.Result, error) { return stmt.ExecHWMAcquire(ctx, e, e.DB, p) },
		Drop: func(ctx context.Context) error {
			_, err := stmt.ExecHWMRelease(ctx, e, e.DB, stmt.HWMReleaseParams{Topic: c.lock, Owner: c.opts.Owner})
			return err
		}}
}
