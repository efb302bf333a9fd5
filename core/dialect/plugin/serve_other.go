//go:build !linux

package plugin

// setParentDeathSignal is Linux-only; elsewhere the ppid poll of
// startParentWatchdog is the only guarantee. On Unix systems an orphan is
// reparented, so its ppid changes. On Windows the parent id does not change
// when the parent exits, so there the watchdog does not fire (go-plugin's
// Managed clients and CleanupClients remain the host-side cleanup).
func setParentDeathSignal() {}
