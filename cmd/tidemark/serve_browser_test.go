package main

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/spf13/cobra"

	"github.com/tidemarkdb/tidemark/conformance/harness"
	"github.com/tidemarkdb/tidemark/core/consumer"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/eventstore"
	"github.com/tidemarkdb/tidemark/core/hwm"
	"github.com/tidemarkdb/tidemark/core/lease"
	"github.com/tidemarkdb/tidemark/internal/testtime"
)

// envConsoleDocs, set to 1, also writes the browser test's screenshots to
// docs/console (the README's and docs/operations.md's pictures).
const envConsoleDocs = "TIDEMARK_CONSOLE_DOCS"

// poisonRef is the consumer the browser test halts.
var poisonRef = consumer.Ref{Type: "projection", Name: "account-balances"}

// TestConsoleInBrowser drives `tidemark serve` (the command, its dialect
// out of process) in headless Chromium on SQLite and PostgreSQL: a consumer
// halts on a poison message, the consumers page shows it HALTED with its
// reason and the dead-letter page the failure; the handler is fixed, the
// operator clicks the retry button, and the page then shows the consumer
// RUNNING with lag 0, the message applied once.
func TestConsoleInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("starts database servers and a browser")
	}
	chrome, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not installed (scripts/setup-debian.sh chromium installs it)")
	}
	prov := harness.NewProvider()
	t.Cleanup(func() { prov.Close() })
	for _, eng := range []string{harness.EngineSQLite, harness.EnginePostgres} {
		t.Run(eng, func(t *testing.T) { consoleInBrowser(t, prov, eng, chrome) })
	}
}

// poisonApp is the application: a runner whose handler fails on the
// poison message until fixed, counting successful applies by position.
type poisonApp struct {
	fixed   atomic.Bool
	mu      sync.Mutex
	applied map[int64]int
	poison  int64
}

func (a *poisonApp) handle(_ context.Context, _ *sql.Tx, m consumer.Msg[eventstore.Recorded]) error {
	if m.Position == a.poison && !a.fixed.Load() {
		return errors.New("balance would go below the overdraft limit: <b>refused</b>")
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.applied[m.Position]++
	return nil
}

func (a *poisonApp) appliedAt(pos int64) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.applied[pos]
}

func consoleInBrowser(t *testing.T, prov *harness.Provider, eng, chrome string) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	db := openOrSkip(t, prov, eng)
	app := startPoisonApp(t, ctx, openAppEngine(t, eng, db))
	base, audit := startServe(t, ctx, db, eng)
	p := consolePage{t: t, b: newBrowser(t, ctx, chrome), base: base, shots: screenshotDirs(t, eng),
		section: fmt.Sprintf(`section[data-consumer=%q]`, poisonRef.String())}
	p.seeHalted()

	// Fix the handler, then retry from the page.
	app.fixed.Store(true)
	if err := chromedp.Do(p.b, chromedp.Navigate(base+"/consumers"),
		chromedp.Click(chromedp.CSS(p.section+` button[data-role=resume]`))); err != nil {
		t.Fatal(err)
	}
	changes, err := textOf(p.b, `#result-changes`)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(changes, "state RUNNING") || !strings.Contains(changes, "1 released with a fresh budget") {
		t.Errorf("the action answered %q", changes)
	}
	p.shoot("action-result")
	var lag, state string
	p.wait("/consumers", "lag 0 and RUNNING on the page", func() (ok bool, err error) {
		if lag, err = textOf(p.b, p.section+` [data-role=lag]`); err != nil {
			return false, err
		}
		state, err = textOf(p.b, p.section+` [data-role=state]`)
		return lag == "0" && state == string(consumer.Running) && app.appliedAt(app.poison) > 0, err
	})
	p.shoot("consumers-recovered")
	if n := app.appliedAt(app.poison); n != 1 {
		t.Errorf("the poison message was applied %d times, want once", n)
	}
	if !strings.Contains(audit.String(), `msg="console action" action=resume consumer=projection/account-balances`) {
		t.Errorf("no audit line for the retry:\n%s", audit)
	}
}

// consolePage is the browser on the console.
type consolePage struct {
	t       *testing.T
	b       context.Context
	base    string
	shots   []string
	section string // the poison consumer's section of a page
}

// seeHalted waits for the consumer HALTED with its reason on the
// consumers page, checks the dead-letter page shows the failure and
// payload as text, and takes the screenshots of every page.
func (p consolePage) seeHalted() {
	t := p.t
	var state, reason string
	p.wait("/consumers", "the consumer HALTED on the page", func() (ok bool, err error) {
		if state, err = textOf(p.b, p.section+` [data-role=state]`); err != nil || state != string(consumer.Halted) {
			return false, err
		}
		reason, err = textOf(p.b, p.section+` [data-role=halt-reason]`)
		return true, err
	})
	if reason != string(consumer.ApplyError) {
		t.Errorf("halt reason on the page %q, want %s", reason, consumer.ApplyError)
	}
	p.shoot("consumers-halted")
	if err := chromedp.Do(p.b, chromedp.Navigate(p.base+"/undelivered?consumer="+poisonRef.String()),
		chromedp.Click(chromedp.CSS(`details summary`))); err != nil {
		t.Fatal(err)
	}
	failure, err := textOf(p.b, `[data-role=failure-reason]`)
	if err != nil {
		t.Fatal(err)
	}
	payload, err := textOf(p.b, `[data-role=payload]`)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(failure, "<b>refused</b>") || !strings.Contains(payload, "<script>alert(1)</script>") {
		t.Errorf("the dead-letter page shows reason %q and payload %q, want the texts as text", failure, payload)
	}
	p.shoot("dead-letters")
	p.wait("/leases", "the instance's leases on the page", func() (bool, error) {
		leases, err := textOf(p.b, p.section+` table`)
		return strings.Contains(leases, "app-1") && strings.Contains(leases, "15@"), err
	})
	// One instance claimed every partition once: no claim beyond the first.
	if n, err := textOf(p.b, p.section+` [data-role=handovers]`); err != nil || n != "0" {
		t.Errorf("handovers on the leases page %q, %v; want 0", n, err)
	}
	for _, page := range []struct{ path, name string }{{"/", "overview"}, {"/leases", "leases"}, {"/sagas", "sagas"}} {
		if err := chromedp.Do(p.b, chromedp.Navigate(p.base+page.path), chromedp.WaitVisible(chromedp.CSS(`main h1`))); err != nil {
			t.Fatal(err)
		}
		p.shoot(page.name)
	}
	// The Sagas page renders in the browser from the tables alone (this app
	// runs no saga: no instances, no lock).
	if h, err := textOf(p.b, `main h1`); err != nil || h != "Sagas" {
		t.Errorf("the sagas page's heading %q, %v", h, err)
	}
	if lock, err := textOf(p.b, `#saga-lock`); err != nil || !strings.Contains(lock, "no process holds") {
		t.Errorf("the sagas page's lock line %q, %v", lock, err)
	}
}

func (p consolePage) wait(path, what string, check func() (bool, error)) {
	p.t.Helper()
	waitPage(p.t, p.b, p.base+path, what, check)
}

func (p consolePage) shoot(name string) {
	p.t.Helper()
	shoot(p.t, p.b, p.shots, name)
}

// startPoisonApp appends three events, the second the poison message, and
// runs the application's runner (halting on a spent budget, one attempt)
// under partition leases until the test ends.
func startPoisonApp(t *testing.T, ctx context.Context, e *engine.Engine) *poisonApp {
	t.Helper()
	ctx, cancel := context.WithCancel(ctx)
	store := eventstore.New(e, nil)
	app := &poisonApp{applied: map[int64]int{}}
	var last int64
	for i, payload := range []string{`{"amount":100}`, `{"amount":-900,"note":"<script>alert(1)</script>"}`, `{"amount":7}`} {
		ap, err := store.Append(ctx, eventstore.Stream{AggregateType: "bank.Account", AggregateID: fmt.Sprintf("acct/%d", i%2+1),
			Events: []eventstore.Event{{Type: "Moved", Payload: []byte(payload)}}})
		if err != nil {
			t.Fatal(err)
		}
		if i == 1 {
			app.poison = ap.Positions[0]
		}
		last = ap.Positions[0]
	}
	advanceTo(t, ctx, e, store, last)
	// The application holds its partitions under leases, so the leases
	// page and the overview's instances have something to show.
	quiet := slog.New(slog.DiscardHandler)
	coord, err := lease.New(e, lease.Options{HostName: "app-1", HeartbeatInterval: 500 * time.Millisecond,
		LeaseDuration: testtime.D(10 * time.Second), RebalanceInterval: 500 * time.Millisecond, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	r, err := consumer.NewRunner(ctx, consumer.NewRegistry(e, nil), consumer.Options{Type: poisonRef.Type, Name: poisonRef.Name,
		Routes: []consumer.Route{consumer.On(consumer.EventStore(store, nil), app.handle)}, Leases: coord,
		Retry: consumer.RetryPolicy{MaxAttempts: 1}, OnError: consumer.PolicyHalt,
		PollInterval: 20 * time.Millisecond, EmptySaveInterval: time.Millisecond, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	coordDone, runDone := make(chan error, 1), make(chan error, 1)
	go func() { coordDone <- coord.Run(ctx) }()
	go func() { runDone <- r.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		for what, done := range map[string]chan error{"runner": runDone, "lease coordinator": coordDone} {
			if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
				t.Errorf("%s: %v", what, err)
			}
		}
	})
	return app
}

// openAppEngine opens the application's engine (it creates the schema)
// through the dialect plugin.
func openAppEngine(t *testing.T, eng string, db *harness.Database) *engine.Engine {
	t.Helper()
	ctx := context.Background()
	l, err := load(ctx, &pluginFlags{dialect: eng})
	if err != nil {
		t.Fatal(err)
	}
	h, err := sql.Open(db.DriverName, db.DSN)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	e, err := engine.Open(ctx, h, l.Catalogue, engine.Config{Partitions: 16})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// advanceTo cycles an advancer until the event store's mark reaches pos.
func advanceTo(t *testing.T, ctx context.Context, e *engine.Engine, store *eventstore.Store, pos int64) {
	t.Helper()
	a := hwm.New(e, hwm.Options{})
	err := testtime.Poll(ctx, "the mark", time.Minute, 5*time.Millisecond, func() (bool, error) {
		if _, err := a.Cycle(ctx); err != nil {
			return false, err
		}
		m, err := store.Mark(ctx)
		return m >= pos, err
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
}

// startServe runs `tidemark serve` on a free loopback port until ctx ends
// and returns its address and its audit log.
func startServe(t *testing.T, ctx context.Context, db *harness.Database, eng string) (string, *syncBuffer) {
	t.Helper()
	return startConsole(t, ctx, consoleServeCmd(), "--dialect", eng, "--dsn", db.DSN, "--driver", db.DriverName, "--listen", "127.0.0.1:0", "--refresh", "0")
}

// startConsole runs cmd, a command that serves the console, until ctx
// ends and returns the address it printed and its log.
func startConsole(t *testing.T, ctx context.Context, cmd *cobra.Command, args ...string) (string, *syncBuffer) {
	t.Helper()
	out, w := io.Pipe()
	audit := &syncBuffer{}
	cmd.SetArgs(args)
	cmd.SetOut(w)
	cmd.SetErr(audit)
	done := make(chan error, 1)
	go func() {
		err := cmd.ExecuteContext(ctx)
		w.CloseWithError(fmt.Errorf("serve ended: %v", err))
		done <- err
	}()
	t.Cleanup(func() {
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	lines := bufio.NewReader(out)
	var line string
	var err error
	for !strings.HasPrefix(line, "tidemark console on ") && err == nil {
		line, err = lines.ReadString('\n')
	}
	go func() { _, _ = io.Copy(io.Discard, lines) }()
	if err != nil {
		t.Fatalf("the console did not start: %v\n%s", err, audit)
	}
	_, rest, _ := strings.Cut(line, " on ")
	addr, _, _ := strings.Cut(rest, " ")
	if !strings.HasPrefix(addr, "http://127.0.0.1:") {
		t.Fatalf("the console said %q", line)
	}
	return strings.TrimSuffix(addr, "/"), audit
}

// newBrowser starts headless Chromium; a browser that cannot start is a
// skip with its reason.
func newBrowser(t *testing.T, ctx context.Context, chrome string) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chrome), chromedp.NoSandbox,
		chromedp.DisableGPU, chromedp.WindowSize(1280, 900))
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(cancelAlloc)
	b, cancel := chromedp.NewContext(actx)
	t.Cleanup(cancel)
	// The first call starts the browser, tied to the context it is given:
	// b itself, not a shorter-lived child.
	if err := chromedp.Do(b); err != nil {
		t.Skipf("chromium cannot start: %v", err)
	}
	return b
}

// textOf is the text of the first element sel matches; a page without one
// is an error after a backstop bound, with the page's text in it.
func textOf(b context.Context, sel string) (string, error) {
	ctx, cancel := testtime.Context(b, 30*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		body, _ := chromedp.Run(b, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
		return "", fmt.Errorf("%s: %w; the page reads:\n%s", sel, err, body)
	}
	return s, nil
}

// waitPage reloads url until check holds (a backstop bound, scaled by
// load, against hanging; no timing is asserted).
func waitPage(t *testing.T, b context.Context, url, what string, check func() (bool, error)) {
	t.Helper()
	err := testtime.Poll(b, what, 2*time.Minute, 100*time.Millisecond, func() (bool, error) {
		if err := chromedp.Do(b, chromedp.Navigate(url)); err != nil {
			return false, err
		}
		return check()
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
}

// screenshotDirs are where the screenshots go: the test's artifact
// directory, and docs/console with TIDEMARK_CONSOLE_DOCS=1 (SQLite only).
func screenshotDirs(t *testing.T, eng string) []string {
	dirs := []string{t.ArtifactDir()}
	if os.Getenv(envConsoleDocs) == "1" && eng == harness.EngineSQLite {
		dirs = append(dirs, filepath.Join("..", "..", "docs", "console"))
	}
	return dirs
}

func shoot(t *testing.T, b context.Context, dirs []string, name string) {
	t.Helper()
	png, err := chromedp.Run(b, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, name+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// syncBuffer is a strings.Builder safe for the serve goroutine's writes.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
