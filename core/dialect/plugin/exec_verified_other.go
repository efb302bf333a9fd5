//go:build !linux

package plugin

import (
	"path/filepath"
	"syscall"
)

// openNonBlock keeps the one open of a plugin path from blocking when the
// path was replaced by a FIFO; a regular file ignores it.
const openNonBlock = syscall.O_NONBLOCK

// verifyBinary opens path once and returns a private copy of its content,
// digested after the copy was made. It is executed by its path: weaker than
// Linux's sealed memfd, since a process of the host's own user could swap
// the copy before the exec (see the comment in exec_verified.go).
func verifyBinary(path string) (*verifiedBinary, error) {
	src, err := openPlugin(path)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	v, err := privateCopy(src, filepath.Base(path))
	if err != nil {
		return nil, err
	}
	_ = v.file.Close()
	v.file = nil
	return v, nil
}
