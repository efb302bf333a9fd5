// Package conformance is the shared suite every dialect plugin must pass,
// on a real database, through the real out-of-process plugin.
//
// It is used three ways with one entry point: `go test` in this repository
// for every built-in plugin, `tidemark conformance --plugin … --dsn …` for
// anyone's plugin binary, and Run from a third party's own tests:
//
//	func TestMyDialect(t *testing.T) {
//	    m := conformance.Run(t, conformance.Target{
//	        Load:   plugin.LoadOptions{Path: "./tidemark-dialect-mydb"},
//	        Driver: "mydriver",
//	        Fresh:  func(ctx context.Context) (string, func(), error) { /* a new empty database's DSN */ },
//	    })
//	    t.Logf("\n%s", m)
//	}
//
// Tests have stable names, grouped by area ("schema/create_twice",
// "eventstore/optimistic_locking", …). A run returns a matrix (dialect ×
// test: pass / fail / skip with the reason). Tests adapt to what the
// catalogue declares (Features): the widest decimal, the time precision,
// the names the dialect's naming produces.
package conformance

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/dialect/plugin"
	"github.com/tidemarkdb/tidemark/core/engine"
)

// T is the part of *testing.T the suite uses, so the CLI can run it too.
type T interface {
	Helper()
	Logf(format string, args ...any)
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
	Fatal(args ...any)
	Skipf(format string, args ...any)
	Failed() bool
	Cleanup(func())
}

// Target is a dialect plugin and a way to get fresh databases for it.
type Target struct {
	// Name labels the matrix row, e.g. "postgres (pgx)"; default the
	// dialect's name.
	Name string
	// Load locates the plugin. The suite loads it out of process.
	Load plugin.LoadOptions
	// Driver is the database/sql driver name (its package must be imported
	// by the caller); default the catalogue's DriverName.
	Driver string
	// Fresh returns the DSN of a new, empty database and a cleanup.
	Fresh func(ctx context.Context) (dsn string, cleanup func(), err error)
	// Only, when set, runs just the tests whose names have one of these prefixes.
	Only []string
	// Clone, when set, copies a database Fresh or Clone made (by its DSN):
	// schema and rows exactly as they are. Run then lays out the suite's
	// default schema once per target and gives each test that opens only
	// that schema a copy, instead of running the DDL per test.
	Clone func(ctx context.Context, dsn string) (string, func(), error)
}

// Env is what a test gets: the loaded catalogue and a fresh database.
type Env struct {
	Target    Target
	Catalogue dialect.Catalogue
	// Features are what the catalogue declares the engine can do; tests
	// adapt to them (FeaturesOf).
	Features Features
	Driver   string
	DB       *sql.DB
	DSN      string
	// OpenDB opens another *sql.DB on the same database.
	OpenDB func() *sql.DB
	// prepared is the configuration the database was laid out with when it
	// is a copy of the target's prepared schema (nil: a fresh database).
	prepared *engine.Config
	// setup is what getting the database and the test's first engine.Open
	// took (the matrix's timing section reports it apart from the tests).
	setup setupClock
}

// setupClock adds up a test's setup time; safe for concurrent use.
type setupClock struct {
	mu     sync.Mutex
	d      time.Duration
	opened bool
}

// firstOpen adds d when it is the test's first engine.Open.
func (c *setupClock) firstOpen(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.opened {
		c.opened, c.d = true, c.d+d
	}
}

func (c *setupClock) total() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.d
}

// Test is one conformance test.
type Test struct {
	Name string // "area/name", stable
	Run  func(t T, env *Env)
}

// Tests returns every test of the suite, in a stable order.
func Tests() []Test {
	var all []Test
	all = append(all, catalogueTests()...)
	all = append(all, schemaTests()...)
	all = append(all, namingTests()...)
	all = append(all, concurrencyTests()...)
	all = append(all, eventStoreTests()...)
	all = append(all, groupCommitTests()...)
	all = append(all, keysTests()...)
	all = append(all, hwmTests()...)
	all = append(all, followStreamTests()...)
	all = append(all, followFaultTests()...)
	all = append(all, positionTests()...)
	all = append(all, readersMarkTests()...)
	all = append(all, queryTableTests()...)
	all = append(all, errorsTests()...)
	all = append(all, locksTests()...)
	all = append(all, timeTests()...)
	all = append(all, captureTests()...)
	all = append(all, rmTopicTests()...)
	all = append(all, consumerTests()...)
	all = append(all, projectionTests()...)
	all = append(all, projectionRebuildTests()...)
	all = append(all, sagaTests()...)
	all = append(all, consumerPollTests()...)
	all = append(all, consumerCaptureTests()...)
	all = append(all, leaseTests()...)
	all = append(all, transientTests()...)
	all = append(all, readOnlyTests()...)
	all = append(all, statementLimitTests()...)
	all = append(all, consumerAdminTests()...)
	all = append(all, consumerConsoleTests()...)
	all = append(all, deliveryTests()...)
	return adaptToLocking(all)
}

// Status of a test in the matrix.
type Status string

// Statuses.
const (
	Pass Status = "pass"
	Fail Status = "fail"
	Skip Status = "skip"
)

// Result is one cell of the matrix.
type Result struct {
	Target string
	Test   string
	Status Status
	Reason string
	// Duration is the test's wall time (shown in the matrix's timing
	// section, so a slow CI run says where its time went).
	Duration time.Duration
	// Setup is the part of Duration spent getting the test's database and
	// in its first engine.Open (laying out or checking the schema).
	Setup time.Duration
}

// Matrix collects results; safe for concurrent use.
type Matrix struct {
	mu      sync.Mutex
	Results []Result
}

// Add records a result.
func (m *Matrix) Add(r Result) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.Results = append(m.Results, r)
}

// Counts returns the numbers of passed, failed and skipped tests.
func (m *Matrix) Counts() (pass, fail, skip int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, r := range m.Results {
		switch r.Status {
		case Pass:
			pass++
		case Fail:
			fail++
		case Skip:
			skip++
		}
	}
	return
}

// String renders the matrix and ends with "N passed, N failed, N skipped".
func (m *Matrix) String() string {
	m.mu.Lock()
	var b strings.Builder
	targets := map[string]bool{}
	for _, r := range m.Results {
		targets[r.Target] = true
	}
	width := 0
	for _, r := range m.Results {
		width = max(width, len(r.Test))
	}
	names := make([]string, 0, len(targets))
	for n := range targets {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(&b, "== %s\n", n)
		for _, r := range m.Results {
			if r.Target != n {
				continue
			}
			line := fmt.Sprintf("  %-*s  %s", width, r.Test, r.Status)
			if r.Reason != "" {
				line += "  (" + firstLine(r.Reason) + ")"
			}
			b.WriteString(line + "\n")
		}
	}
	m.mu.Unlock()
	m.writeTimes(&b, names)
	m.writeFailures(&b)
	p, f, s := m.Counts()
	fmt.Fprintf(&b, "%d passed, %d failed, %d skipped\n", p, f, s)
	return b.String()
}

// writeTimes adds the wall time per target and the ten slowest tests.
func (m *Matrix) writeTimes(b *strings.Builder, names []string) {
	m.mu.Lock()
	rs := append([]Result(nil), m.Results...)
	m.mu.Unlock()
	var total time.Duration
	per, setup := map[string]time.Duration{}, map[string]time.Duration{}
	for _, r := range rs {
		per[r.Target] += r.Duration
		setup[r.Target] += r.Setup
		total += r.Duration
	}
	if total == 0 {
		return
	}
	b.WriteString("-- time per target (of it setup: databases and first engine.Open):")
	for _, n := range names {
		fmt.Fprintf(b, " %s %.0fs (%.0fs);", n, per[n].Seconds(), setup[n].Seconds())
	}
	fmt.Fprintf(b, " total %.0fs\n-- slowest tests:", total.Seconds())
	sort.SliceStable(rs, func(i, j int) bool { return rs[i].Duration > rs[j].Duration })
	for _, r := range rs[:min(10, len(rs))] {
		fmt.Fprintf(b, " %s/%s %.1fs;", r.Target, r.Test, r.Duration.Seconds())
	}
	b.WriteString("\n")
}

// writeFailures repeats every failed test at the end, with its reason, so
// the tail of a long log (all a CI summary keeps) names what failed.
func (m *Matrix) writeFailures(b *strings.Builder) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, r := range m.Results {
		if r.Status == Fail {
			fmt.Fprintf(b, "-- FAILED %s/%s: %s\n", r.Target, r.Test, firstLine(r.Reason))
		}
	}
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 160 {
		s = s[:160] + "…"
	}
	return s
}

// Merge appends every result of other.
func (m *Matrix) Merge(other *Matrix) {
	if other == nil || other == m {
		return
	}
	other.mu.Lock()
	rs := append([]Result(nil), other.Results...)
	other.mu.Unlock()
	m.mu.Lock()
	m.Results = append(m.Results, rs...)
	m.mu.Unlock()
}

// Run runs the suite as subtests of t and returns the matrix of this run
// (one row per test: pass, fail, or skip with its reason). Nothing is kept
// in package state: a caller running several targets merges the matrices
// (Matrix.Merge) or prints each.
func Run(t *testing.T, target Target) *Matrix {
	t.Helper()
	m := &Matrix{}
	ctx := context.Background()
	loaded, err := plugin.Load(ctx, target.Load)
	if err != nil {
		t.Fatalf("loading plugin: %v", err)
		return m
	}
	name := target.Name
	if name == "" {
		name = loaded.Catalogue.Identity.Name
	}
	features := FeaturesOf(loaded.Catalogue)
	t.Logf("%s: %s", name, features)
	prepared := prepareTemplate(t, target, loaded.Catalogue)
	for _, test := range Tests() {
		if !selected(target.Only, test.Name) {
			continue
		}
		t.Run(test.Name, func(tt *testing.T) {
			gt := &goT{T: tt}
			start := time.Now()
			var env *Env
			defer func() {
				r := Result{Target: name, Test: test.Name, Status: Pass, Duration: time.Since(start)}
				if env != nil {
					r.Setup = env.setup.total()
				}
				switch {
				case tt.Failed():
					r.Status, r.Reason = Fail, gt.firstFailure()
				case tt.Skipped():
					r.Status, r.Reason = Skip, gt.reason
					if r.Reason == "" {
						r.Reason = "skipped"
					}
				}
				m.Add(r)
			}()
			env = newEnv(gt, target, loaded.Catalogue, prepared.forTest(test.Name))
			env.setup.d = time.Since(start)
			test.Run(gt, env)
		})
	}
	return m
}

// goT is a *testing.T that remembers why it skipped, for the matrix.
type goT struct {
	*testing.T
	reason  string
	mu      sync.Mutex // Errorf may be called from several goroutines
	failure string
}

func (g *goT) noteSkip(reason string) { g.reason = reason }

// Errorf, Fatalf and Fatal keep the first failure's message for the matrix.
func (g *goT) Errorf(format string, args ...any) {
	g.T.Helper()
	g.noteFailure(fmt.Sprintf(format, args...))
	g.T.Errorf(format, args...)
}

func (g *goT) Fatalf(format string, args ...any) {
	g.T.Helper()
	g.noteFailure(fmt.Sprintf(format, args...))
	g.T.Fatalf(format, args...)
}

func (g *goT) Fatal(args ...any) {
	g.T.Helper()
	g.noteFailure(fmt.Sprint(args...))
	g.T.Fatal(args...)
}

func (g *goT) noteFailure(msg string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.failure == "" {
		g.failure = msg
	}
}

func (g *goT) firstFailure() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.failure == "" {
		return "see test log"
	}
	return g.failure
}

// skipNoter is a T that records skip reasons (goT, cliT).
type skipNoter interface{ noteSkip(string) }

func selected(only []string, name string) bool {
	if len(only) == 0 {
		return true
	}
	for _, o := range only {
		if strings.HasPrefix(name, o) {
			return true
		}
	}
	return false
}

// skipf records the reason, then skips.
func skipf(t T, format string, args ...any) {
	t.Helper()
	if n, ok := t.(skipNoter); ok {
		n.noteSkip(fmt.Sprintf(format, args...))
	}
	t.Skipf(format, args...)
}

// newEnv gives a test a database: a copy of the prepared one when there is
// one for it, else a fresh one.
func newEnv(t T, target Target, cat dialect.Catalogue, prepared *preparedSchema) *Env {
	t.Helper()
	ctx := context.Background()
	fresh := target.Fresh
	if prepared != nil {
		fresh = func(ctx context.Context) (string, func(), error) { return target.Clone(ctx, prepared.dsn) }
	}
	dsn, cleanup, err := fresh(ctx)
	if err != nil {
		t.Fatalf("fresh database: %v", err)
	}
	if cleanup != nil {
		t.Cleanup(cleanup)
	}
	driver := target.Driver
	if driver == "" {
		driver = cat.Identity.DriverName
	}
	open := func() *sql.DB {
		db, err := sql.Open(driver, dsn)
		if err != nil {
			t.Fatalf("sql.Open(%s): %v", driver, err)
		}
		db.SetMaxOpenConns(64)
		t.Cleanup(func() { db.Close() })
		return db
	}
	env := &Env{Target: target, Catalogue: cat, Features: FeaturesOf(cat), Driver: driver, DB: open(), DSN: dsn, OpenDB: open}
	if prepared != nil {
		env.prepared = prepared.cfg
	}
	return env
}
