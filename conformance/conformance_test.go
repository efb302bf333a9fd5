package conformance_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/tidemarkdb/tidemark/conformance"
	"github.com/tidemarkdb/tidemark/conformance/harness"
	"github.com/tidemarkdb/tidemark/core/dialect/plugin"
	"github.com/tidemarkdb/tidemark/internal/testtime"
	"github.com/tidemarkdb/tidemark/plugins/builtin"
)

// target is one row of the matrix: a plugin, an engine and a driver. Its
// lane is the server it runs on: targets of one lane run one after the
// other (a test may look at server-wide state: PostgreSQL's transaction
// horizon, the bridge's memory budget), targets of different lanes run
// side by side, as many as go test's -parallel (GOMAXPROCS: 2 here).
type target struct {
	name, plugin, engine, driver, lane string
}

// targets are the built-ins' rows of the matrix, in the registry's order
// (builtin.Targets: it interleaves the lanes).
var targets = func() []target {
	var out []target
	for _, t := range builtin.Targets() {
		out = append(out, target{t.Name, t.Dialect, t.Engine, t.Driver, t.Lane})
	}
	return out
}()

// lanes holds one lock per lane (see target).
var lanes = func() map[string]*sync.Mutex {
	m := map[string]*sync.Mutex{}
	for _, t := range targets {
		if m[t.lane] == nil {
			m[t.lane] = &sync.Mutex{}
		}
	}
	return m
}()

var (
	pluginDir string
	provider  *harness.Provider
	buildErr  = map[string]error{}
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
	built := map[string]bool{}
	for _, tg := range targets {
		if built[tg.plugin] {
			continue
		}
		built[tg.plugin] = true
		bin := "tidemark-dialect-" + tg.plugin
		cmd := exec.Command("go", "build", "-o", filepath.Join(dir, bin), builtin.CmdPackage(tg.plugin))
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr[tg.plugin] = fmt.Errorf("building %s: %v\n%s", bin, err, out)
		}
	}
	provider = harness.NewProvider()
	code := m.Run()
	provider.Close()
	plugin.CleanupClients()
	os.RemoveAll(dir)
	fmt.Print("\n" + writeMatrix())
	os.Exit(code)
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

func TestConformance(t *testing.T) {
	for _, tg := range targets {
		t.Run(tg.name, func(t *testing.T) {
			if os.Getenv("TIDEMARK_CONFORMANCE_SERIAL") == "" {
				t.Parallel()
			}
			lanes[tg.lane].Lock()
			defer lanes[tg.lane].Unlock()
			if err := buildErr[tg.plugin]; err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			// Probe once: a database that cannot be provided is a skip with
			// its reason, recorded in the matrix, never a pass.
			db, err := provider.Open(ctx, tg.engine, tg.driver)
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
		})
	}
}

// targetOf is tg as a conformance target: fresh databases from the
// provider; with TIDEMARK_CONFORMANCE_CLONE=1, copies of a prepared one
// where the engine's server can copy (PostgreSQL: CREATE DATABASE …
// TEMPLATE) and every test's database dropped at its end. The copies are
// off by default: measured side by side on a loaded machine, the PostgreSQL
// (pgx) target took longer with them (docs/conformance.md).
func targetOf(tg target, probe *harness.Database) conformance.Target {
	copies := os.Getenv("TIDEMARK_CONFORMANCE_CLONE") == "1"
	var mu sync.Mutex
	made := map[string]*harness.Database{}
	keep := func(d *harness.Database) (string, func(), error) {
		mu.Lock()
		made[d.DSN] = d
		mu.Unlock()
		return d.DSN, func() {
			ctx, cancel := testtime.Context(context.Background(), time.Minute)
			defer cancel()
			_ = provider.Drop(ctx, d) // Close drops what is left
		}, nil
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
			if !copies {
				return d.DSN, nil, nil
			}
			return keep(d)
		},
	}
	if !copies {
		return ct
	}
	if !provider.CanClone(probe.Engine) {
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
