package plugin_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/dialect/internal/fixture"
	"github.com/tidemarkdb/tidemark/core/dialect/plugin"
	"github.com/tidemarkdb/tidemark/internal/testtime"
)

// The pin must hold for what is executed, not for what was read: each case
// swaps the pinned path to another plugin binary (one reporting
// fixture.Build "other") through the test seam that runs after the digest
// was verified and before the plugin is executed. A load must then be served
// by the verified binary, or be refused; never by the other one. On Linux
// each case runs with the sealed memfd and with both fallbacks.
func TestPinnedLoadExecutesWhatWasVerified(t *testing.T) {
	type mode struct {
		name    string
		mode    int    // plugin.SetPinFallback
		exeHint string // what /proc/<pid>/exe of the plugin shows
	}
	modes := []mode{{"private copy", 0, ""}}
	if runtime.GOOS == "linux" {
		modes = []mode{
			{"memfd", 0, "/memfd:"},
			{"private copy by fd", 1, "tidemark-dialect-pin-"},
			{"private copy by path", 2, "tidemark-dialect-pin-"},
		}
	}
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			defer plugin.SetPinFallback(m.mode)()
			testPinSwaps(t, m.exeHint)
		})
	}
}

// testPinSwaps runs the swap cases; exeHint, if set, must appear in the
// plugin's /proc/<pid>/exe, which shows the mechanism that executed it.
func testPinSwaps(t *testing.T, exeHint string) {
	other, err := os.ReadFile(bins.pluginOther)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		// setup prepares dir and returns the path to load and the swap.
		setup func(t *testing.T, dir string) (path string, swap func() error)
	}{
		{"replaced by rename", func(t *testing.T, dir string) (string, func() error) {
			p := copyPlugin(t, bins.plugin, dir, "plugin")
			return p, func() error {
				tmp := filepath.Join(dir, "plugin.new")
				if err := os.WriteFile(tmp, other, 0o755); err != nil {
					return err
				}
				return os.Rename(tmp, p)
			}
		}},
		{"overwritten in place", func(t *testing.T, dir string) (string, func() error) {
			p := copyPlugin(t, bins.plugin, dir, "plugin")
			return p, func() error {
				f, err := os.OpenFile(p, os.O_WRONLY|os.O_TRUNC, 0)
				if err != nil {
					return err
				}
				if _, err := f.Write(other); err != nil {
					f.Close()
					return err
				}
				return f.Close()
			}
		}},
		{"symlink flipped", func(t *testing.T, dir string) (string, func() error) {
			good := copyPlugin(t, bins.plugin, dir, "good")
			copyPlugin(t, bins.pluginOther, dir, "other")
			link := filepath.Join(dir, "plugin")
			if err := os.Symlink(good, link); err != nil {
				t.Skipf("no symlinks here: %v", err)
			}
			return link, func() error {
				tmp := filepath.Join(dir, "plugin.new")
				if err := os.Symlink(filepath.Join(dir, "other"), tmp); err != nil {
					return err
				}
				return os.Rename(tmp, link) // atomic flip
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			isolate(t)
			want := digest(t, bins.plugin)
			path, swap := tc.setup(t, t.TempDir())
			swapped := 0
			defer plugin.SetAfterVerify(func(string) {
				swapped++
				if err := swap(); err != nil {
					t.Errorf("swap: %v", err)
				}
			})()
			ctx, cancel := testtime.Context(context.Background(), 30*time.Second)
			defer cancel()
			l, err := plugin.Load(ctx, plugin.LoadOptions{Path: path, SHA256: want, Keep: true})
			if swapped != 1 {
				t.Fatalf("the seam ran %d times, want 1 (err = %v)", swapped, err)
			}
			if digest(t, path) == want {
				t.Fatal("control: the swap did not change the file at the path")
			}
			if err != nil {
				// Refusing is allowed, but on Linux the sealed copy always
				// serves the verified binary.
				t.Logf("refused: %v", err)
				if runtime.GOOS == "linux" {
					t.Errorf("Load refused on Linux: %v", err)
				}
				return
			}
			defer l.Close()
			if b := fixture.BuildOf(l.Catalogue); b != "" {
				t.Fatalf("a load pinned to %s was served by the swapped binary (fixture build %q)", want, b)
			}
			checkFixture(t, l.Catalogue)
			if l.SHA256 != want {
				t.Errorf("SHA256 = %s, want %s", l.SHA256, want)
			}
			if l.Path != path {
				t.Errorf("Path = %q, want %q", l.Path, path)
			}
			if exeHint != "" {
				exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", l.PID))
				if err != nil || !strings.Contains(exe, exeHint) {
					t.Errorf("plugin executable %q (%v), want one with %q", exe, err, exeHint)
				}
				if !strings.HasSuffix(exe, "(deleted)") {
					t.Errorf("plugin executable %q: the host kept its copy", exe)
				}
				t.Logf("plugin %d executes %s", l.PID, exe)
			}
			// The kept process is the verified one, for every later call.
			resp, err := l.Dialect.Describe(ctx, dialect.DescribeRequest{HostContractVersion: dialect.ContractVersion})
			if err != nil {
				t.Fatal(err)
			}
			if b := fixture.BuildOf(resp.Catalogue); b != "" {
				t.Fatalf("kept plugin answers as build %q", b)
			}
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			waitGone(t, l.PID, 2*time.Second)
		})
	}
}

// A pin mismatch is refused with *ChecksumMismatchError before anything is
// started: the seam never runs and the plugin leaves no start marker, both
// for a file and for a symlink to it.
func TestPinMismatchRefusedBeforeStart(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	want := digest(t, bins.plugin)
	otherFile := copyPlugin(t, bins.pluginOther, dir, "other")
	got := digest(t, otherFile)
	link := filepath.Join(dir, "link")
	if err := os.Symlink(otherFile, link); err != nil {
		t.Fatal(err)
	}
	defer plugin.SetAfterVerify(func(p string) {
		t.Errorf("the seam ran after a mismatch (%s)", p)
	})()
	for _, path := range []string{otherFile, link} {
		if err := os.WriteFile(path+".mark", nil, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := plugin.Load(context.Background(), plugin.LoadOptions{Path: path, SHA256: want})
		var mm *plugin.ChecksumMismatchError
		if !errors.As(err, &mm) {
			t.Fatalf("%s: err = %v (%T), want *ChecksumMismatchError", path, err, err)
		}
		if mm.Path != path || mm.Want != want || mm.Got != got {
			t.Errorf("error = %+v, want Path %s Want %s Got %s", mm, path, want, got)
		}
		if _, err := os.Stat(path + ".started"); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: the mismatched plugin was started (marker: %v)", path, err)
		}
	}
}

// A pinned load whose plugin never completes the handshake ends with the
// deadline like an unpinned one; the verified copy is released only after
// the start attempt (a shell script also runs from the copy: the child
// keeps the descriptor its interpreter reopens).
func TestPinnedLoadDeadlineDuringStart(t *testing.T) {
	isolate(t)
	p := filepath.Join(t.TempDir(), "silent")
	if err := os.WriteFile(p, []byte("#!/bin/sh\nexec /bin/sleep 30\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := plugin.Load(ctx, plugin.LoadOptions{Path: p, SHA256: digest(t, p), Logger: hclog.NewNullLogger()})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want the deadline (the script ran from its copy and stayed silent)", err)
	}
	t.Logf("err = %v", err)
}

// A pinned built-in (LoadOptions.SelfServe) runs the verified copy of the
// host binary with the command's own arguments.
func TestPinnedSelfServe(t *testing.T) {
	isolate(t)
	l := load(t, plugin.LoadOptions{
		Name:       fixture.Name,
		PluginDirs: []string{t.TempDir()},
		SHA256:     digest(t, bins.host),
		SelfServe: func(name string) (*exec.Cmd, bool) {
			return exec.Command(bins.host, "serve", name), true
		},
	})
	checkFixture(t, l.Catalogue)
	if !l.BuiltIn || l.Path != bins.host || l.SHA256 != digest(t, bins.host) {
		t.Errorf("BuiltIn %v, Path %q, SHA256 %s; want true, %q, the host's digest", l.BuiltIn, l.Path, l.SHA256, bins.host)
	}
	waitGone(t, l.PID, 2*time.Second)
}
