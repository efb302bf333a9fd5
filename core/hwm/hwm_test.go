package hwm_test

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/hwm"
	"github.com/tidemarkdb/tidemark/internal/sqlitetest"
)

// failures records Metrics.Failed calls.
type failures struct {
	mu  sync.Mutex
	got []error
}

func (f *failures) Observe(string, int64, int64) {}
func (f *failures) Failed(_ string, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.got = append(f.got, err)
}

func newEngine(t *testing.T) *engine.Engine { return sqlitetest.Engine(t) }

// TestStopIsNotFailure: a cycle whose context has ended, and Run stopped
// by its context, report nothing to Metrics.Failed; the cycle returns the
// context's error, Run returns nil.
func TestStopIsNotFailure(t *testing.T) {
	e := newEngine(t)
	tests := []struct {
		name string
		ctx  func() (context.Context, context.CancelFunc)
	}{
		{"canceled", func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx, cancel
		}},
		{"deadline", func() (context.Context, context.CancelFunc) {
			return context.WithDeadline(context.Background(), time.Unix(0, 0))
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := &failures{}
			a := hwm.New(e, hwm.Options{Metrics: rec})
			ctx, cancel := tc.ctx()
			defer cancel()
			_, err := a.Cycle(ctx)
			if !errors.Is(err, ctx.Err()) {
				t.Errorf("Cycle after its context ended: %v, want %v", err, ctx.Err())
			}
			if a.Err() != nil {
				t.Errorf("Err() = %v after a stop, want nil", a.Err())
			}
			if err := a.Run(ctx); err != nil {
				t.Errorf("Run stopped by its context returned %v, want nil", err)
			}
			if len(rec.got) != 0 {
				t.Errorf("a stop was reported as a failure: %v", rec.got)
			}
		})
	}
}

// TestScopeWithoutOldestHolder: a dialect without xid.oldest_holder uses
// the cluster-wide horizon.
func TestScopeWithoutOldestHolder(t *testing.T) {
	e := newEngine(t)
	if e.Has(dialect.OldestHolderXID) {
		t.Fatal("the SQLite catalogue has xid.oldest_holder")
	}
	if s := hwm.New(e, hwm.Options{}).Scope(); s != hwm.ScopeCluster {
		t.Errorf("scope %q, want %q", s, hwm.ScopeCluster)
	}
	if h, held := hwm.New(e, hwm.Options{}).OldestHolder(); held {
		t.Errorf("oldest holder %+v before any check", h)
	}
}

// logRecords is a slog handler keeping every record's level and message.
type logRecords struct {
	mu  sync.Mutex
	got []slog.Record
}

func (h *logRecords) Enabled(context.Context, slog.Level) bool { return true }
func (h *logRecords) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.got = append(h.got, r)
	return nil
}
func (h *logRecords) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *logRecords) WithGroup(string) slog.Handler      { return h }
func (h *logRecords) count(level slog.Level) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, r := range h.got {
		if r.Level == level {
			n++
		}
	}
	return n
}

// TestRunLogsFailureAndRecovery: Run logs the first failure of a run of
// failed cycles once (not every cycle) and the recovery once. The cycles
// fail while the mark's table is renamed away.
func TestRunLogsFailureAndRecovery(t *testing.T) {
	e := newEngine(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	table := e.Names.Shared["high_water_mark_store_table"]
	if _, err := e.DB.ExecContext(ctx, "ALTER TABLE "+table+" RENAME TO HWM_AWAY"); err != nil {
		t.Fatal(err)
	}
	rec, logs := &failures{}, &logRecords{}
	a := hwm.New(e, hwm.Options{Metrics: rec, Logger: slog.New(logs), PollInterval: time.Millisecond})
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	waitFor(t, "three failed cycles", func() bool { rec.mu.Lock(); defer rec.mu.Unlock(); return len(rec.got) >= 3 })
	if n := logs.count(slog.LevelWarn); n != 1 {
		t.Errorf("%d warnings after %d failed cycles, want 1", n, len(rec.got))
	}
	if _, err := e.DB.ExecContext(ctx, "ALTER TABLE HWM_AWAY RENAME TO "+table); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the recovery logged", func() bool { return logs.count(slog.LevelInfo) >= 1 })
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if w, i := logs.count(slog.LevelWarn), logs.count(slog.LevelInfo); w != 1 || i != 1 {
		t.Errorf("%d warnings and %d recoveries logged, want 1 and 1", w, i)
	}
}

// waitFor polls cond; the bound only guards against a hang.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for i := 0; i < 60000; i++ {
		if cond() {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("gave up waiting for %s", what)
}
