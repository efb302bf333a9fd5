package conformance

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/tidemarkdb/tidemark/core/saga"
	"github.com/tidemarkdb/tidemark/internal/testtime"
)

// typeWarnings records the saga_type of every warning logged.
type typeWarnings struct {
	mu    sync.Mutex
	types map[string]int
}

func (w *typeWarnings) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }

func (w *typeWarnings) Handle(_ context.Context, r slog.Record) error {
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "saga_type" {
			w.mu.Lock()
			w.types[a.Value.String()]++
			w.mu.Unlock()
		}
		return true
	})
	return nil
}

func (w *typeWarnings) WithAttrs([]slog.Attr) slog.Handler { return w }
func (w *typeWarnings) WithGroup(string) slog.Handler      { return w }

func (w *typeWarnings) count(sagaType string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.types[sagaType]
}

// testSagaForeignOverdueReported: the lock holder delivers its own saga
// types only. An overdue deadline of a type none of its targets knows
// (another service's saga in the same tables, a type not deployed here
// yet) is neither delivered nor dropped: it waits for a holder that knows
// the type, and Run says so in a warning naming the type.
func testSagaForeignOverdueReported(t T, env *Env) {
	e := openEngine(t, env, defaultConfig(env))
	known, err := saga.Open(e, testSaga("conformance.Known", nil))
	if err != nil {
		t.Fatalf("saga.Open: %v", err)
	}
	foreign, err := saga.Open(e, testSaga("conformance.Foreign", nil))
	if err != nil {
		t.Fatalf("saga.Open: %v", err)
	}
	(&sagaRig{e: e, st: foreign}).apply(t, sagaOpened{ID: "f-1", ArmMs: -5000})
	warned := &typeWarnings{types: map[string]int{}}
	d, err := saga.NewDeadlines(e, []saga.Target{known}, saga.WithPollInterval(20*time.Millisecond),
		saga.WithForeignCheck(20*time.Millisecond), saga.WithLogger(slog.New(warned)),
		saga.WithLeaseDuration(testtime.D(5*time.Second)))
	if err != nil {
		t.Fatalf("NewDeadlines: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	waitFor(t, "a warning naming the foreign saga type", func() bool { return warned.count("conformance.Foreign") > 0 })
	cancel()
	if err := <-done; err != nil && ctx.Err() == nil {
		t.Fatalf("Run: %v", err)
	}
	st, err := saga.ReadStatus(context.Background(), e)
	if err != nil {
		t.Fatalf("ReadStatus: %v", err)
	}
	for _, ts := range st.Types {
		if ts.SagaType == "conformance.Foreign" && ts.Deadlines != 1 {
			t.Errorf("the foreign type's pending deadlines after the known type's deliverer ran: %d, want 1 (kept)", ts.Deadlines)
		}
	}
	if n := warned.count("conformance.Known"); n != 0 {
		t.Errorf("%d warnings named the deliverer's own type", n)
	}
}
