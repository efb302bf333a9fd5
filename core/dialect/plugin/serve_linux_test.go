//go:build linux

package plugin_test

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tidemarkdb/tidemark/internal/testtime"
)

// lastReaped describes the last process processGone reaped.
var lastReaped atomic.Value

// processGone reports whether pid has ended: reaped (ESRCH) or a zombie.
// A zombie that is our child (see the subreaper below) is reaped here.
func processGone(pid int) bool {
	var ws unix.WaitStatus
	if got, err := unix.Wait4(pid, &ws, unix.WNOHANG, nil); err == nil && got == pid {
		lastReaped.Store(fmt.Sprintf("pid %d: exited %v, status %d, signal %v", pid, ws.Exited(), ws.ExitStatus(), ws.Signal()))
		return true
	}
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return errors.Is(err, os.ErrNotExist)
	}
	// The state follows the last ')' (the command name may hold parentheses).
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		if s[i+2] == 'Z' || s[i+2] == 'X' {
			_, _ = unix.Wait4(pid, &ws, unix.WNOHANG, nil) // reap it if it is ours
			return true
		}
	}
	return false
}

// TestPluginDiesWithHost kills a host holding a kept plugin and checks the
// plugin follows within 2 s: once with every mechanism, once with the ppid
// poll alone (PR_SET_PDEATHSIG disabled at link time), and both again with a
// pinned plugin, which runs from its verified copy.
func TestPluginDiesWithHost(t *testing.T) {
	// Become a subreaper, so the orphaned plugin is reparented to this test
	// process, which can then reap it; in a container PID 1 may never reap
	// (processGone also counts a zombie as gone).
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		t.Logf("PR_SET_CHILD_SUBREAPER: %v (zombies left to init)", err)
	}
	for _, tc := range []struct {
		name, plugin string
		pinned       bool // executed from the verified copy
	}{
		{"pdeathsig+poll", bins.plugin, false},
		{"poll-only", bins.pluginNoPDS, false},
		{"pinned", bins.plugin, true},
		{"pinned poll-only", bins.pluginNoPDS, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			isolate(t)
			host := exec.Command(bins.host, "keep", tc.plugin)
			if tc.pinned {
				host.Args = append(host.Args, digest(t, tc.plugin))
			}
			out, err := host.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			host.Stderr = os.Stderr
			if err := host.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { _ = host.Process.Kill(); _ = host.Wait() }()

			line := make(chan string, 1)
			go func() {
				s, _ := bufio.NewReader(out).ReadString('\n')
				line <- s
			}()
			var pid int
			select {
			case s := <-line:
				if _, err := fmt.Sscanf(s, "pid %d", &pid); err != nil || pid <= 0 {
					t.Fatalf("host said %q", s)
				}
			case <-testtime.After(30 * time.Second):
				t.Fatal("host printed no plugin pid")
			}
			if processGone(pid) {
				t.Fatalf("plugin %d is not running while its host lives", pid)
			}
			// While the host lives, the plugin stays up.
			time.Sleep(400 * time.Millisecond)
			if processGone(pid) {
				t.Fatalf("plugin %d died while its host lives", pid)
			}

			if err := host.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			_ = host.Wait()
			start := time.Now()
			deadline := start.Add(2 * time.Second)
			for !processGone(pid) {
				if time.Now().After(deadline) {
					_ = syscall.Kill(pid, syscall.SIGKILL)
					t.Fatalf("plugin %d still running 2s after its host was killed", pid)
				}
				time.Sleep(10 * time.Millisecond)
			}
			t.Logf("plugin %d gone %v after the host was killed (%v)", pid, time.Since(start).Round(time.Millisecond), lastReaped.Load())
		})
	}
}
