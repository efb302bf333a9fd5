//go:build !linux

package plugin_test

import (
	"errors"
	"os"
	"syscall"
)

// processGone reports whether pid has ended (best effort off Linux).
func processGone(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return true
	}
	return errors.Is(p.Signal(syscall.Signal(0)), os.ErrProcessDone)
}
