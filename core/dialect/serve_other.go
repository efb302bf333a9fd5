//go:build !linux

package dialect

// setParentDeathSignal is Linux-only; elsewhere the ppid poll of
// startParentWatchdog is the only guarantee.
func setParentDeathSignal() {}
