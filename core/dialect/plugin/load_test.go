package plugin_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/dialect/internal/fixture"
	"github.com/tidemarkdb/tidemark/core/dialect/plugin"
	"github.com/tidemarkdb/tidemark/internal/testtime"
)

// Binaries built once per test binary by TestMain.
var bins struct {
	plugin      string // fixture plugin
	pluginV2    string // fixture plugin announcing contract version 99 (not this host's)
	pluginNoPDS string // fixture plugin without PR_SET_PDEATHSIG (ppid poll only)
	pluginOther string // fixture plugin reporting fixture.Build "other"
	host        string // testhost
}

const pkg = "github.com/tidemarkdb/tidemark/core/dialect/plugin"

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "tidemark-dialect-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := func() int {
		defer os.RemoveAll(dir)
		bins.plugin = filepath.Join(dir, "testplugin")
		bins.pluginV2 = filepath.Join(dir, "testplugin-v2")
		bins.pluginNoPDS = filepath.Join(dir, "testplugin-nopds")
		bins.pluginOther = filepath.Join(dir, "testplugin-other")
		bins.host = filepath.Join(dir, "testhost")
		builds := []struct{ out, ldflags, main string }{
			{bins.plugin, "", "./internal/testplugin"},
			{bins.pluginV2, "-X " + pkg + ".contractVersionOverride=99", "./internal/testplugin"},
			{bins.pluginNoPDS, "-X " + pkg + ".disableParentDeathSignal=1", "./internal/testplugin"},
			{bins.pluginOther, "-X github.com/tidemarkdb/tidemark/core/dialect/internal/fixture.Build=other", "./internal/testplugin"},
			{bins.host, "", "./internal/testhost"},
		}
		for _, b := range builds {
			args := []string{"build", "-o", b.out}
			if b.ldflags != "" {
				args = append(args, "-ldflags", b.ldflags)
			}
			cmd := exec.Command("go", append(args, b.main)...)
			if out, err := cmd.CombinedOutput(); err != nil {
				fmt.Fprintf(os.Stderr, "go build %s: %v\n%s", b.main, err, out)
				return 1
			}
		}
		return m.Run()
	}()
	plugin.CleanupClients()
	os.Exit(code)
}

// isolate clears the plugin path so the developer's environment cannot
// change what a test finds.
func isolate(t *testing.T) {
	t.Helper()
	t.Setenv(plugin.PluginPathEnv, "")
}

// copyPlugin copies src to dir/name (mode 0755) and returns the new path.
func copyPlugin(t *testing.T, src, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, name)
	if err := os.WriteFile(dst, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return dst
}

func digest(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// checkFixture asserts a loaded catalogue is the fixture's, probes aside,
// and returns the probes.
func checkFixture(t *testing.T, c dialect.Catalogue) (envNames []string, leak string) {
	t.Helper()
	envNames, leak = fixture.Split(&c)
	if want := fixture.Catalogue(); !reflect.DeepEqual(c, want) {
		t.Fatalf("catalogue did not round-trip:\n got %+v\nwant %+v", c, want)
	}
	return envNames, leak
}

// waitGone polls until pid no longer runs (gone, or a zombie), at most d.
func waitGone(t *testing.T, pid int, d time.Duration) {
	t.Helper()
	deadline := testtime.Deadline(d)
	for {
		if processGone(pid) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d still running after %v", pid, testtime.Describe(d))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func load(t *testing.T, opts plugin.LoadOptions) *plugin.Loaded {
	t.Helper()
	ctx, cancel := testtime.Context(context.Background(), 30*time.Second)
	defer cancel()
	l, err := plugin.Load(ctx, opts)
	if err != nil {
		t.Fatalf("Load(%+v): %v", opts, err)
	}
	return l
}

func TestLoadByPath(t *testing.T) {
	isolate(t)
	l := load(t, plugin.LoadOptions{Path: bins.plugin})
	checkFixture(t, l.Catalogue)
	if l.Path != bins.plugin {
		t.Errorf("Path = %q, want %q", l.Path, bins.plugin)
	}
	if l.SHA256 != digest(t, bins.plugin) {
		t.Errorf("SHA256 = %q, want the file's digest", l.SHA256)
	}
	if l.BuiltIn || l.Dialect != nil {
		t.Errorf("BuiltIn = %v, Dialect = %v; want false, nil", l.BuiltIn, l.Dialect)
	}
	if l.PID <= 0 {
		t.Fatalf("PID = %d", l.PID)
	}
	// Load without Keep stops the plugin before returning.
	waitGone(t, l.PID, 2*time.Second)
	if err := l.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}

func TestLoadByNameFromPluginPathEnv(t *testing.T) {
	dir := t.TempDir()
	p := copyPlugin(t, bins.plugin, dir, plugin.PluginFileName(fixture.Name))
	missing := filepath.Join(t.TempDir(), "missing")
	t.Setenv(plugin.PluginPathEnv, missing+string(os.PathListSeparator)+""+string(os.PathListSeparator)+dir)
	l := load(t, plugin.LoadOptions{Name: fixture.Name})
	checkFixture(t, l.Catalogue)
	if l.Path != p {
		t.Errorf("Path = %q, want %q", l.Path, p)
	}
}

func TestLoadByNameFromPluginDirs(t *testing.T) {
	// PluginDirs are searched before TIDEMARK_PLUGIN_PATH: put a plugin that
	// would fail (foreign contract version) on the env path.
	envDir := t.TempDir()
	copyPlugin(t, bins.pluginV2, envDir, plugin.PluginFileName(fixture.Name))
	t.Setenv(plugin.PluginPathEnv, envDir)
	empty, dir := t.TempDir(), t.TempDir()
	p := copyPlugin(t, bins.plugin, dir, plugin.PluginFileName(fixture.Name))
	l := load(t, plugin.LoadOptions{Name: fixture.Name, PluginDirs: []string{empty, dir}})
	checkFixture(t, l.Catalogue)
	if l.Path != p {
		t.Errorf("Path = %q, want %q", l.Path, p)
	}
}

func TestLoadSelfServe(t *testing.T) {
	isolate(t)
	var asked string
	l := load(t, plugin.LoadOptions{
		Name:       fixture.Name,
		PluginDirs: []string{t.TempDir()},
		SelfServe: func(name string) (*exec.Cmd, bool) {
			asked = name
			return exec.Command(bins.host, "serve", name), true
		},
	})
	checkFixture(t, l.Catalogue)
	if asked != fixture.Name || !l.BuiltIn || l.Path != bins.host {
		t.Errorf("asked %q, BuiltIn %v, Path %q; want %q, true, %q", asked, l.BuiltIn, l.Path, fixture.Name, bins.host)
	}
	waitGone(t, l.PID, 2*time.Second)
}

func TestLoadDescribeErrorCrossesTheWire(t *testing.T) {
	isolate(t)
	_, err := plugin.Load(context.Background(), plugin.LoadOptions{
		Name:       "failing",
		PluginDirs: []string{t.TempDir()},
		SelfServe: func(name string) (*exec.Cmd, bool) {
			return exec.Command(bins.host, "serve", name), true
		},
		Logger: hclog.NewNullLogger(),
	})
	if err == nil || !strings.Contains(err.Error(), "fixture: asked to fail") {
		t.Fatalf("err = %v, want the plugin's Describe error", err)
	}
	t.Logf("err = %v", err)
}

func TestLoadSHA256Pin(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	good := copyPlugin(t, bins.plugin, dir, "good")
	want := digest(t, good)

	// The right digest loads (case does not matter), and the marker proves
	// the mechanism that shows a start.
	if err := os.WriteFile(good+".mark", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	l := load(t, plugin.LoadOptions{Path: good, SHA256: strings.ToUpper(want)})
	checkFixture(t, l.Catalogue)
	if _, err := os.Stat(good + ".started"); err != nil {
		t.Fatalf("control: the pinned plugin left no start marker: %v", err)
	}

	// A tampered copy (one byte appended) is refused and never started.
	bad := copyPlugin(t, bins.plugin, dir, "tampered")
	f, err := os.OpenFile(bad, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte{0}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := os.WriteFile(bad+".mark", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	got := digest(t, bad)
	_, err = plugin.Load(context.Background(), plugin.LoadOptions{Path: bad, SHA256: want})
	var mm *plugin.ChecksumMismatchError
	if !errors.As(err, &mm) {
		t.Fatalf("err = %v (%T), want *ChecksumMismatchError", err, err)
	}
	t.Logf("err = %v", err)
	if mm.Path != bad || mm.Want != want || mm.Got != got {
		t.Errorf("error = %+v, want Path %s Want %s Got %s", mm, bad, want, got)
	}
	for _, s := range []string{bad, want, got} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("message %q does not name %s", err, s)
		}
	}
	if _, err := os.Stat(bad + ".started"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the tampered plugin was started (marker: %v)", err)
	}

	// A malformed pin is a configuration error, not a mismatch.
	_, err = plugin.Load(context.Background(), plugin.LoadOptions{Path: good, SHA256: "abc"})
	if err == nil || errors.As(err, &mm) {
		t.Errorf("malformed pin: err = %v", err)
	}
}

func TestHostEnvNotLeaked(t *testing.T) {
	isolate(t)
	t.Setenv(fixture.LeakCheckEnv, "host-secret")
	l := load(t, plugin.LoadOptions{Path: bins.plugin})
	names, leak := checkFixture(t, l.Catalogue)
	if leak != "" {
		t.Errorf("plugin saw %s=%q; the host environment leaked", fixture.LeakCheckEnv, leak)
	}
	// Only what go-plugin itself sets may be there.
	for _, n := range names {
		if n != "TIDEMARK_DIALECT_PLUGIN" && !strings.HasPrefix(n, "PLUGIN_") {
			t.Errorf("plugin environment has %s, which go-plugin does not set", n)
		}
	}
	if len(names) == 0 {
		t.Errorf("plugin reported no environment at all; the probe is broken")
	}
}

func TestContractVersionMismatch(t *testing.T) {
	isolate(t)
	_, err := plugin.Load(context.Background(), plugin.LoadOptions{Path: bins.pluginV2, Logger: hclog.NewNullLogger()})
	var cv *dialect.ContractVersionError
	if !errors.As(err, &cv) {
		t.Fatalf("err = %v (%T), want *ContractVersionError", err, err)
	}
	t.Logf("err = %v", err)
	if cv.Host != dialect.ContractVersion || cv.Plugin != 99 || cv.Path != bins.pluginV2 {
		t.Errorf("error = %+v", cv)
	}
	if !strings.Contains(err.Error(), "contract version mismatch") {
		t.Errorf("message %q is not clear", err)
	}
}

func TestLoadNameMustMatchIdentity(t *testing.T) {
	isolate(t)
	_, err := plugin.Load(context.Background(), plugin.LoadOptions{Path: bins.plugin, Name: "postgres"})
	if err == nil || !strings.Contains(err.Error(), `"postgres"`) || !strings.Contains(err.Error(), `"fixture"`) {
		t.Fatalf("err = %v, want a name mismatch naming both", err)
	}
}

func TestLoadKeep(t *testing.T) {
	isolate(t)
	l := load(t, plugin.LoadOptions{Path: bins.plugin, Keep: true})
	defer l.Close()
	checkFixture(t, l.Catalogue)
	if processGone(l.PID) {
		t.Fatalf("kept plugin %d is not running", l.PID)
	}
	if l.Dialect == nil {
		t.Fatal("kept Loaded has no Dialect")
	}
	resp, err := l.Dialect.Describe(context.Background(), dialect.DescribeRequest{HostContractVersion: dialect.ContractVersion})
	if err != nil {
		t.Fatal(err)
	}
	checkFixture(t, resp.Catalogue)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	waitGone(t, l.PID, 2*time.Second)
	if err := l.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

func TestLoadCanceledContext(t *testing.T) {
	isolate(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := plugin.Load(ctx, plugin.LoadOptions{Path: bins.plugin}); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestLoadDeadlineDuringStart(t *testing.T) {
	isolate(t)
	// A "plugin" that never completes the handshake.
	p := filepath.Join(t.TempDir(), "silent")
	if err := os.WriteFile(p, []byte("#!/bin/sh\nexec /bin/sleep 30\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := plugin.Load(ctx, plugin.LoadOptions{Path: p, Logger: hclog.NewNullLogger()})
	if err == nil {
		t.Fatal("Load of a silent plugin succeeded")
	}
	if d := time.Since(start); d > testtime.D(5*time.Second) {
		t.Fatalf("Load returned after %v, want about the 300ms deadline (%v)", d, err)
	}
	t.Logf("err = %v", err)
}

func TestLoadConcurrent(t *testing.T) {
	isolate(t)
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := plugin.Load(context.Background(), plugin.LoadOptions{Path: bins.plugin})
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

func TestPluginRunByHand(t *testing.T) {
	// Without the handshake cookie the plugin explains itself and exits 1.
	cmd := exec.Command(bins.plugin)
	cmd.Env = []string{}
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("err = %v, want exit status 1; output %q", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "plugin") {
		t.Errorf("output %q does not explain", stderr.String())
	}
}
