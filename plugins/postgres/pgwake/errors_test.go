package pgwake_test

import (
	"context"
	"log/slog"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/tidemarkdb/tidemark/internal/testtime"
	"github.com/tidemarkdb/tidemark/plugins/postgres/pgwake"
)

// countingHandler counts slog records by level.
type countingHandler struct {
	mu     sync.Mutex
	counts map[slog.Level]int
}

func (h *countingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *countingHandler) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.counts[r.Level]++
	return nil
}
func (h *countingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *countingHandler) WithGroup(string) slog.Handler      { return h }

func (h *countingHandler) count(l slog.Level) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.counts[l]
}

// TestListenFailureVisible: a waker that cannot connect reports every
// failed attempt to OnError, keeps the failure as Err, logs it once for
// the whole outage (not once per retry), and still wakes its followers so
// they poll.
func TestListenFailureVisible(t *testing.T) {
	// A port nobody listens on: bind one, then close it.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h := &countingHandler{counts: map[slog.Level]int{}}
	failures := make(chan error, 16)
	w := pgwake.Listen(ctx, "postgres://nobody@"+addr+"/none?sslmode=disable&connect_timeout=5", "event-store",
		pgwake.WithLogger(slog.New(h)), pgwake.OnError(func(err error) {
			select {
			case failures <- err:
			default:
			}
		}))
	woken := w.Changed()
	guard := testtime.After(60 * time.Second) // a hang guard, not a timed assertion
	for i := range 3 {
		select {
		case err := <-failures:
			if err == nil {
				t.Fatalf("attempt %d reported a nil error", i)
			}
		case <-guard:
			t.Fatalf("only %d failed attempts reported", i)
		}
	}
	if w.Err() == nil {
		t.Errorf("Err() is nil while the waker cannot listen")
	}
	if n := h.count(slog.LevelWarn); n != 1 {
		t.Errorf("%d warnings logged over 3 failed attempts, want 1 for the outage", n)
	}
	select {
	case <-woken:
	default:
		t.Errorf("followers were not woken after a failed attempt (they may have missed notifications)")
	}
	select {
	case <-w.Ready():
		t.Errorf("Ready closed without a LISTEN in place")
	default:
	}
}
