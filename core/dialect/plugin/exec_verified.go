package plugin

import (
	"crypto/sha256"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"

	"github.com/hashicorp/go-hclog"
)

// A pinned plugin is executed from a private copy of the binary whose digest
// is taken after the copy was made, so what runs is exactly what was
// verified. Hashing the path and letting go-plugin execute the path again
// left a window in which a rename, an in-place write or a flipped symlink
// started an unpinned binary (seen in 8 of 60 pinned loads).
//
// The file at the path is opened once, and everything after that goes
// through descriptors:
//
//   - Linux: the content is copied into a sealed memfd (no writes, no size
//     change, no new seals), the digest is taken of the memfd, and the child
//     executes "/proc/self/fd/N" where N is that memfd passed as an extra
//     file: the only path resolved after the check names a descriptor, not
//     the file system. Nobody, the host included, can change a sealed memfd.
//   - Where memfds are unavailable (a kernel before 3.17, vm.memfd_noexec=2,
//     a seccomp filter) and on other systems: a copy in a new 0700 directory
//     of the host, digested after the copy. On Linux with /proc it is still
//     executed through its descriptor; otherwise by its path, which only a
//     process of the host's own user (or root) can swap before the exec.
//     That is weaker, but such a process can change the host itself.
//
// Cost, measured here for a 30 MB binary: the copy takes about 20 ms and the
// digest about 21 ms; the old flow digested the file twice (the host, then
// go-plugin's SecureConfig), about 42 ms, so a pinned load costs the same.
// A memfd holds its pages for the plugin's life (30 MB of shared memory per
// kept plugin of that size, where the page cache held the file before).

// pinFallback, set only by tests, forces the Linux fallbacks: 1 a private
// copy executed through its descriptor, 2 a private copy executed by path.
var pinFallback int

// verifiedBinary is a plugin binary's content, verified and no longer
// changeable by anyone but the host's user.
type verifiedBinary struct {
	sum  []byte   // SHA-256 of the content that will be executed
	file *os.File // the content, executed through /proc/self/fd; nil: by path
	path string   // the private copy executed by path when file is nil
	dir  string   // the private directory to remove, or ""
}

// configure makes cmd execute the verified content. argv[0] stays the
// original path, so the plugin's process listing and os.Args name it.
func (v *verifiedBinary) configure(cmd *exec.Cmd) {
	if len(cmd.Args) == 0 {
		cmd.Args = []string{cmd.Path}
	}
	if v.file == nil {
		cmd.Path = v.path
		return
	}
	// os/exec places ExtraFiles[i] at descriptor 3+i in the child before it
	// calls execve, which resolves the path there, so the number is fixed;
	// the host's own number of the file does not matter.
	cmd.ExtraFiles = append(cmd.ExtraFiles, v.file)
	cmd.Path = "/proc/self/fd/" + strconv.Itoa(2+len(cmd.ExtraFiles))
}

// release closes the host's handle and removes a private copy. Call it only
// once the start attempt has ended: the child receives the descriptor while
// it is being started.
func (v *verifiedBinary) release() {
	if v.file != nil {
		_ = v.file.Close()
	}
	if v.dir != "" {
		// On Windows a running executable cannot be removed; the directory
		// is then left in the temporary directory.
		_ = os.RemoveAll(v.dir)
	}
}

// openPlugin opens the plugin file: the only lookup of its path in a pinned
// load. It refuses anything but a regular, executable file.
func openPlugin(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|openNonBlock, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil {
		err = regularExecutable(fi)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// regularExecutable reports whether fi is a regular, executable file.
func regularExecutable(fi fs.FileInfo) error {
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("not a regular file")
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm()&0o111 == 0 {
		return fmt.Errorf("not executable")
	}
	return nil
}

// privateCopy copies src into a new directory only the host's user can
// write (os.MkdirTemp creates it 0700) and digests the copy, reopened
// read-only, after it was written.
func privateCopy(src *os.File, name string) (v *verifiedBinary, err error) {
	dir, err := os.MkdirTemp("", "tidemark-dialect-pin-")
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			_ = os.RemoveAll(dir)
		}
	}()
	dst := filepath.Join(dir, name)
	w, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o500)
	if err != nil {
		return nil, err
	}
	_, err = io.Copy(w, io.NewSectionReader(src, 0, 1<<62))
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	r, err := os.Open(dst)
	if err != nil {
		return nil, err
	}
	sum, err := readerSHA256(io.NewSectionReader(r, 0, 1<<62))
	if err != nil {
		r.Close()
		return nil, err
	}
	return &verifiedBinary{sum: sum, file: r, path: dst, dir: dir}, nil
}

// readerSHA256 digests what r yields.
func readerSHA256(r io.Reader) ([]byte, error) {
	h := sha256.New()
	if _, err := io.Copy(h, r); err != nil {
		return nil, err
	}
	return h.Sum(nil), nil
}

// renamedLogger renames go-plugin's logger for the plugin's output, which is
// named after the executed path: "3" for "/proc/self/fd/3".
type renamedLogger struct {
	hclog.Logger
	from, to string
}

// Named replaces the name of the executed path with the plugin's.
func (l renamedLogger) Named(name string) hclog.Logger {
	if name == l.from {
		name = l.to
	}
	return l.Logger.Named(name)
}
