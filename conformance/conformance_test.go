package conformance_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/tidemarkdb/tidemark/conformance"
	"github.com/tidemarkdb/tidemark/conformance/harness"
	"github.com/tidemarkdb/tidemark/core/dialect/plugin"
	"github.com/tidemarkdb/tidemark/plugins/builtin"
)

// target is one row of the matrix: a plugin, an engine and a driver. Its
// lane is the server it runs on: targets of one lane run one after the
// other (a test may look at server-wide state: PostgreSQL's transaction
// horizon, the bridge's memory budget), targets of different lanes run
// side by side, as many as go test's -parallel (GOMAXPROCS: 2 here; see
// laneScheduler).
type target struct {
	name, plugin, engine, driver, lane string
}

// laneOrder serves the lanes longest first (times per target: the
// matrix's timing section); a lane not listed comes last.
var laneOrder = []string{"postgres", "mariadb", "bridge", "sqlite", "sqlserver"}

// targets are the built-ins' rows of the matrix (builtin.Targets), by
// lane in laneOrder, each lane's in the registry's order.
var targets = func() []target {
	var out []target
	for _, t := range builtin.Targets() {
		out = append(out, target{t.Name, t.Dialect, t.Engine, t.Driver, t.Lane})
	}
	rank := func(lane string) int {
		if i := slices.Index(laneOrder, lane); i >= 0 {
			return i
		}
		return len(laneOrder)
	}
	slices.SortStableFunc(out, func(a, b target) int { return rank(a.lane) - rank(b.lane) })
	return out
}()

var (
	pluginDir string
	provider  *harness.Provider
	buildErr  = map[string]error{} // written before built is closed
	// built is closed when the plugins are built; servers start meanwhile.
	built = make(chan struct{})
	// matrix gathers the matrix each target's Run returns.
	matrix = &conformance.Matrix{}
)

func TestMain(m *testing.M) {
	conformance.MaybeWorker() // a worker process of a multi-process test runs its job and exits here
	dir, err := os.MkdirTemp("", "tidemark-plugins-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	pluginDir = dir
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		defer close(built)
		buildPlugins(ctx, dir)
	}()
	provider = harness.NewProvider()
	code := m.Run()
	cancel() // a run that needed no plugin does not wait for their build
	<-built
	provider.Close()
	plugin.CleanupClients()
	os.RemoveAll(dir)
	fmt.Print("\n" + writeMatrix())
	os.Exit(code)
}

// pluginErr waits for the plugins' build and says why the named plugin's
// failed.
func pluginErr(name string) error {
	<-built
	return buildErr[name]
}

// buildPlugins builds every target's plugin into dir with one go build, so
// the go command compiles and links them side by side; when that fails, it
// builds them one by one so each target fails with its own plugin's error.
func buildPlugins(ctx context.Context, dir string) {
	var pkgs, plugins []string
	for _, tg := range targets {
		if !slices.Contains(plugins, tg.plugin) {
			plugins = append(plugins, tg.plugin)
			pkgs = append(pkgs, builtin.CmdPackage(tg.plugin))
		}
	}
	if _, err := exec.CommandContext(ctx, "go", append([]string{"build", "-o", dir + string(filepath.Separator)}, pkgs...)...).CombinedOutput(); err == nil || ctx.Err() != nil {
		return
	}
	for i, p := range plugins {
		bin := plugin.PluginBinaryPrefix + p
		if out, err := exec.CommandContext(ctx, "go", "build", "-o", filepath.Join(dir, bin), pkgs[i]).CombinedOutput(); err != nil {
			buildErr[p] = fmt.Errorf("building %s: %v\n%s", bin, err, out)
		}
	}
}

// writeMatrix renders the matrix so far and writes it to
// TIDEMARK_MATRIX_FILE (go test hides a passing package's output; make
// test prints this file, also after a failure or a timeout).
func writeMatrix() string {
	out := "Conformance matrix\n" + matrix.String()
	if f := os.Getenv("TIDEMARK_MATRIX_FILE"); f != "" {
		_ = os.WriteFile(f, []byte(out), 0o644)
	}
	return out
}

// TestConformance runs every target, runSlots at a time. The tests with
// servers of their own (TestGalera, TestReplicas) are parallel tests: they
// run side by side after it (beside it, one of them could hold a -parallel
// slot while the targets waited for theirs).
func TestConformance(t *testing.T) {
	var order []string
	byLane := map[string][]target{}
	for _, tg := range targets {
		if byLane[tg.lane] == nil {
			order = append(order, tg.lane)
		}
		byLane[tg.lane] = append(byLane[tg.lane], tg)
	}
	sched := newLaneScheduler(runSlots(), order)
	var wg sync.WaitGroup
	for _, lane := range order {
		wg.Add(1)
		go func(tgs []target) {
			defer wg.Done()
			for _, tg := range tgs {
				sched.acquire(tg.lane)
				t.Run(tg.name, func(t *testing.T) { runTarget(t, tg) })
				sched.release()
			}
		}(byLane[lane])
	}
	wg.Wait()
}

// runTarget runs the suite on one target.
func runTarget(t *testing.T, tg target) {
	ctx := context.Background()
	// Probe once: a database that cannot be provided is a skip with
	// its reason, recorded in the matrix, never a pass. The server
	// starts while the plugins build.
	db, err := provider.Open(ctx, tg.engine, tg.driver)
	if err := pluginErr(tg.plugin); err != nil {
		t.Fatal(err)
	}
	var skipped *harness.Skipped
	if errors.As(err, &skipped) {
		for _, test := range conformance.Tests() {
			matrix.Add(conformance.Result{Target: tg.name, Test: test.Name, Status: conformance.Skip, Reason: skipped.Reason})
		}
		t.Skipf("%s: %s", tg.name, skipped.Reason)
	}
	if err != nil {
		t.Fatalf("database for %s: %v", tg.name, err)
	}
	t.Logf("%s: %s %s", tg.name, db.Source, db.Note)
	m := conformance.Run(t, targetOf(tg, db))
	matrix.Merge(m)
	writeMatrix() // after every target: a run cut short still shows where it got
}

// targetOf is tg as a conformance target: fresh databases from the
// provider, and copies of a prepared one where the engine's server can copy
// (PostgreSQL: CREATE DATABASE … TEMPLATE) unless TIDEMARK_CONFORMANCE_CLONE
// is 0. Databases are kept until the provider closes, copies or not: a DROP
// DATABASE per test cost more than the copy saved (docs/conformance.md).
func targetOf(tg target, probe *harness.Database) conformance.Target {
	copies := os.Getenv("TIDEMARK_CONFORMANCE_CLONE") != "0"
	var mu sync.Mutex
	made := map[string]*harness.Database{}
	keep := func(d *harness.Database) (string, func(), error) {
		if copies {
			mu.Lock()
			made[d.DSN] = d
			mu.Unlock()
		}
		return d.DSN, nil, nil
	}
	ct := conformance.Target{
		Name:   tg.name,
		Load:   plugin.LoadOptions{Name: tg.plugin, PluginDirs: []string{pluginDir}},
		Driver: tg.driver,
		Fresh: func(ctx context.Context) (string, func(), error) {
			d, err := provider.Open(ctx, tg.engine, tg.driver)
			if err != nil {
				return "", nil, err
			}
			return keep(d)
		},
	}
	if !copies || !provider.CanClone(probe.Engine) {
		return ct
	}
	ct.Clone = func(ctx context.Context, dsn string) (string, func(), error) {
		mu.Lock()
		from := made[dsn]
		mu.Unlock()
		if from == nil {
			return "", nil, fmt.Errorf("clone: %s was not made here", dsn)
		}
		d, err := provider.Clone(ctx, from)
		if err != nil {
			return "", nil, err
		}
		return keep(d)
	}
	return ct
}
