//go:build linux

package plugin

import "golang.org/x/sys/unix"

// setParentDeathSignal asks the kernel to SIGKILL this process when its
// parent dies (PR_SET_PDEATHSIG). The plugin holds no state worth a graceful
// shutdown, so SIGKILL is fine.
//
// Caveat: Linux delivers the signal when the parent *thread* that forked this
// process exits, not when the parent process does. The host is a Go program;
// its runtime forks from whichever OS thread runs the goroutine, and that
// thread can exit while the host lives on (a goroutine that ends while
// locked with runtime.LockOSThread takes its thread with it), which would
// kill a kept plugin early. Conversely nothing is delivered when the setting
// is lost or unsupported. The ppid poll in startParentWatchdog is therefore
// the real guarantee; this signal only makes the common case immediate.
func setParentDeathSignal() {
	_ = unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(unix.SIGKILL), 0, 0, 0)
}
