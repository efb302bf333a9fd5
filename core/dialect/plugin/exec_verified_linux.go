//go:build linux

package plugin

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// openNonBlock keeps the one open of a plugin path from blocking when the
// path was replaced by a FIFO; a regular file ignores it.
const openNonBlock = unix.O_NONBLOCK

// memfdSeals forbid every change of a memfd's content and of its seals.
const memfdSeals = unix.F_SEAL_SEAL | unix.F_SEAL_SHRINK | unix.F_SEAL_GROW | unix.F_SEAL_WRITE

// verifyBinary opens path once and returns its content as a sealed memfd
// (or, without memfds, a private copy), digested after it was sealed.
func verifyBinary(path string) (*verifiedBinary, error) {
	src, err := openPlugin(path)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	merr := errors.New("disabled by the tests")
	if pinFallback == 0 {
		var v *verifiedBinary
		if v, merr = sealedCopy(src, filepath.Base(path)); merr == nil {
			return v, nil
		}
	}
	v, err := privateCopy(src, filepath.Base(path))
	if err != nil {
		return nil, fmt.Errorf("no sealed copy (%v) and no private copy: %w", merr, err)
	}
	if pinFallback == 2 || !procFD(v.file) {
		// Without /proc the copy is executed by its path.
		_ = v.file.Close()
		v.file = nil
	}
	return v, nil
}

// sealedCopy copies src into a memfd, seals it and digests it.
func sealedCopy(src *os.File, name string) (*verifiedBinary, error) {
	const flags = unix.MFD_CLOEXEC | unix.MFD_ALLOW_SEALING
	// MFD_EXEC (Linux 6.3) keeps the memfd executable under
	// vm.memfd_noexec=1; older kernels refuse the unknown flag.
	fd, err := unix.MemfdCreate(name, flags|unix.MFD_EXEC)
	if errors.Is(err, unix.EINVAL) {
		fd, err = unix.MemfdCreate(name, flags)
	}
	if err != nil {
		return nil, fmt.Errorf("memfd_create: %w", err)
	}
	f := os.NewFile(uintptr(fd), "memfd:"+name)
	v, err := sealAndDigest(f, src)
	if err != nil {
		f.Close()
		return nil, err
	}
	return v, nil
}

// sealAndDigest fills the memfd f from src, seals it and digests it.
func sealAndDigest(f, src *os.File) (*verifiedBinary, error) {
	if _, err := io.Copy(f, io.NewSectionReader(src, 0, 1<<62)); err != nil {
		return nil, fmt.Errorf("copy into memfd: %w", err)
	}
	// F_SEAL_EXEC (Linux 6.3) also fixes the mode bits; older kernels
	// refuse it, and then the four others still fix the content.
	_, err := unix.FcntlInt(f.Fd(), unix.F_ADD_SEALS, memfdSeals|unix.F_SEAL_EXEC)
	if errors.Is(err, unix.EINVAL) {
		_, err = unix.FcntlInt(f.Fd(), unix.F_ADD_SEALS, memfdSeals)
	}
	if err != nil {
		return nil, fmt.Errorf("seal memfd: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if err := regularExecutable(fi); err != nil {
		return nil, fmt.Errorf("memfd: %w (vm.memfd_noexec?)", err)
	}
	if !procFD(f) {
		return nil, errors.New("/proc/self/fd is not available")
	}
	sum, err := readerSHA256(io.NewSectionReader(f, 0, 1<<62))
	if err != nil {
		return nil, fmt.Errorf("digest memfd: %w", err)
	}
	return &verifiedBinary{sum: sum, file: f}, nil
}

// procFD reports whether f can be reached through /proc/self/fd, which the
// child's execve needs.
func procFD(f *os.File) bool {
	_, err := os.Stat("/proc/self/fd/" + strconv.Itoa(int(f.Fd())))
	return err == nil
}
