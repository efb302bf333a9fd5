package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"syscall"
)

// liveWorker is a worker process the test talks to while it runs (RunWorkers
// only waits for results): it reads the worker's lines as they come, writes
// lines to its stdin, and signals or kills it. The lease tests use it for
// kill -9 and SIGSTOP.
type liveWorker struct {
	w     *worker
	lines chan string
}

// startLive starts one worker, waits for "ready" and releases it.
func startLive(ctx context.Context, t T, job WorkerJob) *liveWorker {
	t.Helper()
	w, err := startWorker(ctx, job)
	if err != nil {
		t.Fatal(err)
	}
	lw := &liveWorker{w: w, lines: make(chan string, 64)}
	t.Cleanup(func() {
		w.stdin.Close()
		_ = w.cmd.Process.Signal(syscall.SIGCONT)
		_ = w.cmd.Process.Kill()
		_ = w.cmd.Wait()
	})
	if !w.lines.Scan() || w.lines.Text() != "ready" {
		err := workerFailure(ctx, w, errNoWorkers)
		if errors.Is(err, errNoWorkers) {
			skipf(t, "%v", err)
		}
		t.Fatal(err)
	}
	go func() {
		defer close(lw.lines)
		for w.lines.Scan() {
			lw.lines <- w.lines.Text()
		}
	}()
	lw.send(t, "go")
	return lw
}

// expect returns the next line starting with prefix (other lines are
// skipped); it fails when the worker ends first or ctx ends.
func (lw *liveWorker) expect(ctx context.Context, t T, prefix string) string {
	t.Helper()
	for {
		select {
		case l, ok := <-lw.lines:
			if !ok {
				t.Fatalf("the worker ended before printing %q: %v", prefix, workerFailure(context.Background(), lw.w, errors.New("no such line")))
			}
			if strings.HasPrefix(l, "result ") && !strings.HasPrefix(prefix, "result ") {
				t.Fatalf("the worker ended before printing %q: %s", prefix, l)
			}
			if strings.HasPrefix(l, prefix) {
				return l
			}
		case <-ctx.Done():
			t.Fatalf("waiting for the worker to print %q: %v", prefix, ctx.Err())
		}
	}
}

func (lw *liveWorker) send(t T, line string) {
	t.Helper()
	if _, err := io.WriteString(lw.w.stdin, line+"\n"); err != nil {
		t.Fatalf("writing to the worker: %v", err)
	}
}

func (lw *liveWorker) signal(t T, sig syscall.Signal) {
	t.Helper()
	if err := lw.w.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("signal %v: %v", sig, err)
	}
}

// kill is kill -9; it waits for the process to end.
func (lw *liveWorker) kill(t T) {
	t.Helper()
	if err := lw.w.cmd.Process.Kill(); err != nil {
		t.Fatalf("kill -9: %v", err)
	}
	_ = lw.w.cmd.Wait()
}

// result waits for the worker's result line.
func (lw *liveWorker) result(ctx context.Context, t T) WorkerResult {
	t.Helper()
	l := lw.expect(ctx, t, "result ")
	var r WorkerResult
	if err := json.Unmarshal([]byte(strings.TrimPrefix(l, "result ")), &r); err != nil {
		t.Fatal(err)
	}
	return r
}
