package conformance

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/internal/testtime"
)

// WorkerEnv is the environment variable that turns a process started by
// the suite into a worker: it carries the worker's WorkerJob as JSON.
const WorkerEnv = "TIDEMARK_CONFORMANCE_WORKER"

// Behaviour between processes (concurrent first starts, later partition
// leases) is tested with separate OS processes: the suite re-executes its
// own binary (os.Args[0]) with WorkerEnv set. Such a binary must call
// MaybeWorker first thing, before anything else runs:
//
//	func TestMain(m *testing.M) { conformance.MaybeWorker(); os.Exit(m.Run()) }
//
// The worker protocol, one JSON or text line each on stdin and stdout:
// the worker prepares (opens the database), prints "ready", waits for one
// line on stdin (the start barrier: the suite releases every worker at
// once), runs its action and prints "result " followed by a WorkerResult.

// WorkerJob is what one worker process does.
type WorkerJob struct {
	// Action names a registered WorkerAction, e.g. "open".
	Action string `json:"action"`
	// Catalogue is the dialect's catalogue as the suite loaded it through
	// the plugin, so the worker needs no plugin lookup of its own.
	Catalogue dialect.Catalogue `json:"catalogue"`
	Driver    string            `json:"driver"`
	DSN       string            `json:"dsn"`
	// Config is the engine configuration of actions that open an engine.
	Config engine.Config `json:"config"`
	// Args are the action's own arguments.
	Args json.RawMessage `json:"args,omitempty"`
}

// WorkerResult is what a worker reports.
type WorkerResult struct {
	OK bool `json:"ok"`
	// ErrorKind is the Go type of the first error of Tidemark's own in the
	// error's chain (e.g. "*engine.PartitionMismatchError"), or "" for an
	// error of no such type; Error is its text.
	ErrorKind string          `json:"error_kind,omitempty"`
	Error     string          `json:"error,omitempty"`
	Data      json.RawMessage `json:"data,omitempty"`
}

// WorkerAction runs a job on an open database; its result (JSON-encodable,
// may be nil) is reported as WorkerResult.Data.
type WorkerAction func(ctx context.Context, db *sql.DB, job WorkerJob) (any, error)

var (
	actionsMu sync.Mutex
	actions   = map[string]WorkerAction{
		// open opens an engine with job.Config (creating the schema) and
		// closes it again.
		"open": func(ctx context.Context, db *sql.DB, job WorkerJob) (any, error) {
			e, err := engine.Open(ctx, db, job.Catalogue, job.Config)
			if err != nil {
				return nil, err
			}
			return nil, e.Close()
		},
	}
)

// openJob decodes job's arguments into an A and opens the engine of job's
// catalogue and config on db: the start of every action that runs a
// consumer or a lease member.
func openJob[A any](ctx context.Context, db *sql.DB, job WorkerJob) (*engine.Engine, A, error) {
	var args A
	if err := json.Unmarshal(job.Args, &args); err != nil {
		return nil, args, err
	}
	e, err := engine.Open(ctx, db, job.Catalogue, job.Config)
	return e, args, err
}

// RegisterWorkerAction adds an action workers can run (call it from an
// init function, so the worker process knows it too).
func RegisterWorkerAction(name string, fn WorkerAction) {
	actionsMu.Lock()
	defer actionsMu.Unlock()
	actions[name] = fn
}

// MaybeWorker runs the worker job of WorkerEnv and exits, or returns at
// once when the variable is not set.
func MaybeWorker() {
	raw := os.Getenv(WorkerEnv)
	if raw == "" {
		return
	}
	res := runWorker(raw, bufio.NewReader(os.Stdin))
	out, _ := json.Marshal(res)
	fmt.Printf("result %s\n", out)
	os.Exit(0)
}

func runWorker(raw string, barrier *bufio.Reader) WorkerResult {
	var job WorkerJob
	if err := json.Unmarshal([]byte(raw), &job); err != nil {
		return errorResult(fmt.Errorf("worker job: %w", err))
	}
	actionsMu.Lock()
	fn := actions[job.Action]
	actionsMu.Unlock()
	if fn == nil {
		return errorResult(fmt.Errorf("unknown worker action %q", job.Action))
	}
	ctx, cancel := testtime.Context(context.Background(), 5*time.Minute)
	defer cancel()
	db, err := sql.Open(job.Driver, job.DSN)
	if err != nil {
		return errorResult(err)
	}
	defer db.Close()
	if err := db.PingContext(ctx); err != nil {
		return errorResult(fmt.Errorf("worker ping: %w", err))
	}
	fmt.Println("ready")
	if _, err := barrier.ReadString('\n'); err != nil {
		return errorResult(fmt.Errorf("waiting for the start barrier: %w", err))
	}
	data, err := fn(ctx, db, job)
	if err != nil {
		return errorResult(err)
	}
	res := WorkerResult{OK: true}
	if data != nil {
		if res.Data, err = json.Marshal(data); err != nil {
			return errorResult(err)
		}
	}
	return res
}

func errorResult(err error) WorkerResult {
	return WorkerResult{ErrorKind: errorKind(err), Error: err.Error()}
}

// errorKind is the type of the first error of this module's own packages in
// err's chain (depth first).
func errorKind(err error) string {
	if err == nil {
		return ""
	}
	t := reflect.TypeOf(err)
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if strings.HasPrefix(t.PkgPath(), "github.com/tidemarkdb/tidemark/") {
		return reflect.TypeOf(err).String()
	}
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		return errorKind(u.Unwrap())
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			if k := errorKind(e); k != "" {
				return k
			}
		}
	}
	return ""
}

// errNoWorkers is returned when the running binary does not call
// MaybeWorker (it printed no "ready").
var errNoWorkers = errors.New("this binary does not run conformance workers: call conformance.MaybeWorker() first thing in its main or TestMain")

// ErrWorkerHung is in RunWorkers' error when a worker was still running at
// the hang bound (the error then ends with its goroutines). A test that
// expects a worker to end without a result (killed) must still fail on it:
// a hung worker also ends without one.
var ErrWorkerHung = errors.New("worker hung")

// worker is one started worker process.
type worker struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  *bufio.Scanner
	stderr *lockedBuffer
}

// lockedBuffer collects a worker's stderr, written by exec's copier while
// the suite may read it.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// RunWorkers starts one OS process per job (this binary, re-executed),
// waits until each is ready, releases them together and returns their
// results in job order. A worker that ends without a result (killed, say)
// makes the error; the results of the others are returned with it.
//
// A ctx without a deadline gets WorkerHangBound. When the bound passes,
// every worker still running gets SIGQUIT, so the error carries its
// goroutines (a hung worker otherwise hangs the whole test binary until
// go test's own timeout, which names no worker and no cause).
func RunWorkers(ctx context.Context, jobs []WorkerJob) ([]WorkerResult, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = testtime.Context(ctx, WorkerHangBound)
		defer cancel()
	}
	ws := make([]*worker, 0, len(jobs))
	defer func() {
		for _, w := range ws {
			w.stdin.Close()
			_ = w.cmd.Process.Kill()
			_ = w.cmd.Wait()
		}
	}()
	for _, job := range jobs {
		w, err := startWorker(ctx, job)
		if err != nil {
			return nil, err
		}
		ws = append(ws, w)
	}
	for _, w := range ws {
		if !w.lines.Scan() || w.lines.Text() != "ready" {
			return nil, workerFailure(ctx, w, errNoWorkers)
		}
	}
	for _, w := range ws { // the start barrier
		if _, err := io.WriteString(w.stdin, "go\n"); err != nil {
			return nil, workerFailure(ctx, w, err)
		}
	}
	// Every worker's result is read, also after one ended without any (a
	// test that kills a worker gets the others' results with the error).
	out := make([]WorkerResult, len(ws))
	var failed error
	for i, w := range ws {
		got := false
		for !got && w.lines.Scan() {
			if rest, ok := strings.CutPrefix(w.lines.Text(), "result "); ok {
				if err := json.Unmarshal([]byte(rest), &out[i]); err != nil {
					return nil, workerFailure(ctx, w, err)
				}
				got = true
			}
		}
		switch {
		case got:
		case failed == nil:
			failed = workerFailure(ctx, w, errors.New("worker ended without a result"))
		case ctx.Err() != nil:
			// A hang: every hung worker's goroutines, as the one that
			// hangs first may only wait for another.
			failed = errors.Join(failed, fmt.Errorf("worker %d of %d: %w", i+1, len(ws), workerFailure(ctx, w, errors.New("no result either"))))
		}
	}
	return out, failed
}

func startWorker(ctx context.Context, job WorkerJob) (*worker, error) {
	raw, err := json.Marshal(job)
	if err != nil {
		return nil, err
	}
	var args []string
	if testing.Testing() {
		args = []string{"-test.run=^$"} // a binary without MaybeWorker runs no test
	}
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	// On the hang bound: SIGQUIT makes the Go runtime print every
	// goroutine to stderr and exit; a worker that still lives 10 s later
	// is killed.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGQUIT) }
	cmd.WaitDelay = 10 * time.Second
	cmd.Env = append(os.Environ(), WorkerEnv+"="+string(raw))
	w := &worker{cmd: cmd, stderr: &lockedBuffer{}}
	cmd.Stderr = w.stderr
	if w.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	w.lines = bufio.NewScanner(stdout)
	w.lines.Buffer(make([]byte, 64<<10), 16<<20)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return w, nil
}

// WorkerHangBound is how long RunWorkers lets its workers run when the
// caller's context has no deadline. The worker tests that use it take
// 1–4 s each on 2 cores; 5 minutes only ends a hang.
const WorkerHangBound = 5 * time.Minute

func workerFailure(ctx context.Context, w *worker, err error) error {
	if ctx.Err() != nil { // hung: the worker's goroutines are the cause
		time.Sleep(time.Second) // let exec's copier take the dump's end
		return fmt.Errorf("%w: %w until %v; its stderr ends with:\n%s", err, ErrWorkerHung, context.Cause(ctx), lastLines(w.stderr.String(), 400))
	}
	if s := strings.TrimSpace(w.stderr.String()); s != "" {
		return fmt.Errorf("%w (worker stderr: %s)", err, firstLine(s))
	}
	return err
}

// lastLines is the end of s, at most n lines.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
