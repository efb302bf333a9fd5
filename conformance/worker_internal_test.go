package conformance

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/schema"
	"github.com/tidemarkdb/tidemark/internal/testtime"
)

func TestErrorKind(t *testing.T) {
	pm := &engine.PartitionMismatchError{Table: "P", Persisted: 8, Configured: 16}
	for _, c := range []struct {
		err  error
		want string
	}{
		{nil, ""},
		{errors.New("plain"), ""},
		{pm, "*engine.PartitionMismatchError"},
		{fmt.Errorf("opening: %w", pm), "*engine.PartitionMismatchError"},
		{errors.Join(errors.New("x"), &schema.NameConflictError{}), "*schema.NameConflictError"},
	} {
		if got := errorKind(c.err); got != c.want {
			t.Errorf("errorKind(%v) = %q, want %q", c.err, got, c.want)
		}
	}
}

func TestRunWorkerRefusesBadJobs(t *testing.T) {
	barrier := bufio.NewReader(strings.NewReader("go\n"))
	if r := runWorker("{", barrier); r.OK || !strings.Contains(r.Error, "worker job") {
		t.Errorf("malformed job: %+v", r)
	}
	if r := runWorker(`{"action":"nope"}`, barrier); r.OK || !strings.Contains(r.Error, "unknown worker action") {
		t.Errorf("unknown action: %+v", r)
	}
}

func init() {
	RegisterWorkerAction("test-hang", func(ctx context.Context, db *sql.DB, job WorkerJob) (any, error) {
		hangForeverInWorker()
		return nil, nil
	})
}

// hangForeverInWorker blocks on nothing ctx can end, as a worker stuck in a
// lock or a pipe would.
func hangForeverInWorker() { select {} }

// A worker that hangs ends RunWorkers at its bound with the worker's
// goroutines in the error, instead of hanging the test binary (which CI
// saw: 24 minutes in RunWorkers, then go test's own timeout).
func TestRunWorkersEndsAHangWithTheWorkersGoroutines(t *testing.T) {
	t.Parallel() // it only waits out its bound: it runs beside the other parallel tests
	dsn := filepath.Join(t.TempDir(), "hang.db")
	ctx, cancel := testtime.Context(context.Background(), 3*time.Second)
	defer cancel()
	hang := WorkerJob{Action: "test-hang", Driver: "sqlite", DSN: dsn}
	_, err := RunWorkers(ctx, []WorkerJob{hang, hang})
	if err == nil {
		t.Fatal("a hung worker gave no error")
	}
	if !strings.Contains(err.Error(), "hangForeverInWorker") {
		t.Errorf("the error does not show where the worker hung: %v", err)
	}
	// The kill tests accept "worker ended without a result"; a hang must
	// stay tellable from a kill (errors.Is), or its goroutines are lost.
	if !errors.Is(err, ErrWorkerHung) {
		t.Errorf("a hung worker's error is not ErrWorkerHung: %v", err)
	}
	// Every hung worker's goroutines: the first may only wait for another.
	if n := strings.Count(err.Error(), "hangForeverInWorker"); n < 2 {
		t.Errorf("the goroutines of %d hung workers in the error, want both: %v", n, err)
	}
}
