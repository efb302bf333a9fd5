package plugin

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
)

// PluginPathEnv is the environment variable holding extra plugin
// directories, separated by os.PathListSeparator. Empty entries are ignored
// (they never mean the working directory).
const PluginPathEnv = "TIDEMARK_PLUGIN_PATH"

// PluginBinaryPrefix is the file-name prefix of a dialect plugin: the plugin
// for dialect "postgres" is "tidemark-dialect-postgres" (".exe" on Windows).
const PluginBinaryPrefix = "tidemark-dialect-"

// dialectNameRE bounds dialect names so a name can never walk out of a
// plugin directory.
var dialectNameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,62}$`)

// PluginFileName returns the plugin binary name for a dialect name.
func PluginFileName(name string) string {
	if runtime.GOOS == "windows" {
		return PluginBinaryPrefix + name + ".exe"
	}
	return PluginBinaryPrefix + name
}

// NotFoundError reports that no plugin was found for a dialect name. Searched
// lists every place looked at, in order, each with where it came from.
type NotFoundError struct {
	Name     string
	Searched []string
}

// Error names the binary looked for and every place searched.
func (e *NotFoundError) Error() string {
	return fmt.Sprintf("dialect %q: no plugin %s found; searched: %s",
		e.Name, PluginFileName(e.Name), strings.Join(e.Searched, ", "))
}

// located is what discovery found: a command to start and the file it runs.
type located struct {
	cmd     *exec.Cmd
	path    string // absolute path of the executable file
	builtIn bool   // from SelfServe
}

// locate finds the plugin for opts. An explicit Path wins; otherwise the
// name is searched in PluginDirs, then TIDEMARK_PLUGIN_PATH, then the
// directory of the running executable, and last SelfServe.
func locate(opts LoadOptions) (located, error) {
	if opts.Path != "" {
		p, err := filepath.Abs(opts.Path)
		if err != nil {
			return located{}, fmt.Errorf("dialect plugin %s: %w", opts.Path, err)
		}
		if err := checkExecutable(p); err != nil {
			return located{}, fmt.Errorf("dialect plugin %s: %w", p, err)
		}
		return located{cmd: exec.Command(p), path: p}, nil
	}
	if opts.Name == "" {
		return located{}, errors.New("dialect: LoadOptions needs a Name or a Path")
	}
	if !dialectNameRE.MatchString(opts.Name) {
		return located{}, fmt.Errorf("dialect: invalid dialect name %q (want %s)", opts.Name, dialectNameRE)
	}
	file := PluginFileName(opts.Name)
	nf := &NotFoundError{Name: opts.Name}
	try := func(dir, origin string) (string, bool) {
		if dir == "" {
			return "", false
		}
		p := filepath.Join(dir, file)
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
		err := checkExecutable(p)
		if err == nil {
			return p, true
		}
		entry := fmt.Sprintf("%s (%s)", filepath.Dir(p), origin)
		if !errors.Is(err, fs.ErrNotExist) {
			entry = fmt.Sprintf("%s (%s: %v)", filepath.Dir(p), origin, err)
		}
		nf.Searched = append(nf.Searched, entry)
		return "", false
	}
	for _, dir := range opts.PluginDirs {
		if p, ok := try(dir, "plugin_dirs"); ok {
			return located{cmd: exec.Command(p), path: p}, nil
		}
	}
	for _, dir := range filepath.SplitList(os.Getenv(PluginPathEnv)) {
		if p, ok := try(dir, PluginPathEnv); ok {
			return located{cmd: exec.Command(p), path: p}, nil
		}
	}
	if exe, err := os.Executable(); err == nil {
		if resolved, err := filepath.EvalSymlinks(exe); err == nil {
			exe = resolved
		}
		if p, ok := try(filepath.Dir(exe), "executable directory"); ok {
			return located{cmd: exec.Command(p), path: p}, nil
		}
	} else {
		nf.Searched = append(nf.Searched, fmt.Sprintf("executable directory (unknown: %v)", err))
	}
	if opts.SelfServe != nil {
		if cmd, ok := opts.SelfServe(opts.Name); ok && cmd != nil {
			p := cmd.Path
			if abs, err := filepath.Abs(p); err == nil {
				p = abs
			}
			return located{cmd: cmd, path: p, builtIn: true}, nil
		}
		nf.Searched = append(nf.Searched, "built-in dialects (not built in)")
	} else {
		nf.Searched = append(nf.Searched, "built-in dialects (none offered)")
	}
	return located{}, nf
}

// checkExecutable reports whether p is a regular, executable file.
func checkExecutable(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("not a regular file")
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm()&0o111 == 0 {
		return fmt.Errorf("not executable")
	}
	return nil
}
