package harness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tidemarkdb/tidemark/internal/testtime"
)

// readyTimeout bounds how long a started server may take to accept
// connections.
const readyTimeout = 30 * time.Second

// stopTimeout bounds a graceful shutdown before the server is killed.
const stopTimeout = 15 * time.Second

// proc is a server process started by the harness.
type proc struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	exited  chan struct{} // closed when the process has been reaped
	waitErr error         // valid after exited is closed
	stopSig syscall.Signal
}

// sysProcAttr returns attributes that make a child die with the test process
// and, when cred is not nil, run as another user.
func sysProcAttr(cred *syscall.Credential) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{
		// The kernel sends SIGKILL to the child when the thread that
		// started it dies; Go sets it after switching credentials, so it
		// survives the setuid.
		Pdeathsig:  syscall.SIGKILL,
		Credential: cred,
		Setpgid:    true,
	}
}

// runTool runs a short-lived command (initdb, mariadb-install-db) to
// completion and returns its combined output in the error on failure.
func runTool(ctx context.Context, cred *syscall.Credential, env []string, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.SysProcAttr = sysProcAttr(cred)
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, tail(out.String(), 30))
	}
	return nil
}

// startProc starts a long-running server with output to logPath.
func startProc(name string, cred *syscall.Credential, env []string, logPath string, stopSig syscall.Signal, bin string, args ...string) (*proc, error) {
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	cmd := exec.Command(bin, args...)
	cmd.SysProcAttr = sysProcAttr(cred)
	cmd.Env = env
	cmd.Stdout = logf
	cmd.Stderr = logf
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, logPath: logPath, exited: make(chan struct{}), stopSig: stopSig}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// waitReady pings driverName/dsn until it answers, the process exits, ctx
// ends or readyTimeout passes.
func (p *proc) waitReady(ctx context.Context, driverName, dsn string) error {
	ctx, cancel := testtime.Context(ctx, readyTimeout)
	defer cancel()
	var last error
	for {
		pctx, pcancel := testtime.Context(ctx, 2*time.Second)
		last = pingWith(pctx, driverName, dsn)
		pcancel()
		if last == nil {
			return nil
		}
		select {
		case <-p.exited:
			return fmt.Errorf("%s exited during start-up (%v); log %s:\n%s", p.name, p.waitErr, p.logPath, p.logTail())
		case <-ctx.Done():
			return fmt.Errorf("%s not accepting connections after %v (%v), last error: %v; log %s:\n%s", p.name, testtime.Describe(readyTimeout), ctx.Err(), last, p.logPath, p.logTail())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// stop asks the process to shut down and kills it if it does not within
// stopTimeout.
func (p *proc) stop() error {
	select {
	case <-p.exited:
		return nil
	default:
	}
	_ = p.cmd.Process.Signal(p.stopSig)
	select {
	case <-p.exited:
		return nil
	case <-testtime.After(stopTimeout):
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	<-p.exited
	return fmt.Errorf("%s did not stop within %v after %v; killed", p.name, testtime.Describe(stopTimeout), p.stopSig)
}

// kill stops the process group at once, for a throw-away server whose
// files are deleted next: nothing is lost by not shutting it down.
func (p *proc) kill() error {
	select {
	case <-p.exited:
		return nil
	default:
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	<-p.exited
	return nil
}

func (p *proc) logTail() string {
	b, err := os.ReadFile(p.logPath)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	return tail(string(b), 30)
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// freePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// startWithRetry calls try up to three times with a fresh port, since a port
// found free may be taken before the server binds it.
func startWithRetry(try func(port int) error) error {
	var errs []error
	for i := 0; i < 3; i++ {
		port, err := freePort()
		if err != nil {
			return err
		}
		err = try(port)
		if err == nil {
			return nil
		}
		errs = append(errs, err)
		if !strings.Contains(err.Error(), "in use") {
			break
		}
	}
	return errors.Join(errs...)
}

// lookPath finds the first of names on PATH or in the usual system
// directories, which a non-login root shell may lack on PATH.
func lookPath(names ...string) string {
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
		for _, dir := range []string{"/usr/sbin", "/usr/local/sbin", "/sbin", "/usr/bin", "/usr/local/bin"} {
			if st, err := os.Stat(dir + "/" + n); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
				return dir + "/" + n
			}
		}
	}
	return ""
}

// ownerFile, in each temporary directory of the harness, holds the pid of the
// process that made it, so that a later run can remove directories left by a
// test process that was killed before Close.
const ownerFile = "tidemark-owner.pid"

var sweepOnce sync.Once

// markOwner records this process as the owner of dir.
func markOwner(dir string) {
	_ = os.WriteFile(filepath.Join(dir, ownerFile), []byte(strconv.Itoa(os.Getpid())), 0o644)
}

// sweepStale removes temporary directories whose owning process is gone
// (its servers died with it through Pdeathsig).
func sweepStale() { sweepOnce.Do(sweepStaleNow) }

func sweepStaleNow() {
	for _, base := range []string{os.TempDir(), "/tmp", memDirBase} {
		matches, _ := filepath.Glob(filepath.Join(base, "tidemark-*-*"))
		for _, dir := range matches {
			b, err := os.ReadFile(filepath.Join(dir, ownerFile))
			if err != nil {
				continue
			}
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil || pid <= 0 || pid == os.Getpid() {
				continue
			}
			if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
				_ = os.RemoveAll(dir)
			}
		}
	}
}

// removeLater deletes dir in a process of its own that outlives this one, so
// a test binary does not wait for it: a PostgreSQL directory holds every
// database of a run, hundreds of thousands of files, and deleting them took
// minutes on a loaded disk. If rm cannot start, dir is deleted here.
func removeLater(dir string) error {
	cmd := exec.Command("rm", "-rf", "--", dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return os.RemoveAll(dir)
	}
	go func() { _ = cmd.Wait() }()
	return nil
}
