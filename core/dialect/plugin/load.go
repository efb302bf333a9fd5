package plugin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	goplugin "github.com/hashicorp/go-plugin"
	"github.com/tidemarkdb/tidemark/core/dialect"
)

// PluginLogEnv names the environment variable that sets the level of the
// host's plugin logger (trace, debug, info, warn, error, off); default warn.
const PluginLogEnv = "TIDEMARK_PLUGIN_LOG"

// LoadOptions says which dialect plugin to load and how.
type LoadOptions struct {
	// Name is the dialect name; the plugin binary is "tidemark-dialect-<name>".
	// When Path is also set, Name is only checked against the catalogue.
	Name string
	// Path is an explicit plugin binary; it wins over Name.
	Path string
	// PluginDirs are searched first, in order (the configuration's plugin
	// directories), then TIDEMARK_PLUGIN_PATH, then the directory of the
	// running executable, then SelfServe.
	PluginDirs []string
	// SHA256 optionally pins the plugin binary (hex digest). A binary whose
	// digest differs is refused with *ChecksumMismatchError and never started.
	// A pinned binary is read once into a copy that cannot change (a sealed
	// memfd on Linux), and that copy is digested and executed, so replacing
	// the file or a symlink on its path while loading cannot start another
	// binary. Outside Linux the copy lies in a private 0700 directory and is
	// executed by its path, which only the host's own user could swap.
	SHA256 string
	// SelfServe, when set, is asked last: a host binary carrying built-in
	// dialects returns a command re-executing itself as the plugin for name
	// (whose main then calls Serve), and true. The command's Env, if set, is
	// passed as is; leave it nil so the plugin gets no host environment.
	SelfServe func(name string) (*exec.Cmd, bool)
	// Logger receives go-plugin's and the plugin's log lines. Default: a
	// logger on stderr at the level of TIDEMARK_PLUGIN_LOG (default warn).
	Logger hclog.Logger
	// Keep leaves the plugin process running after Describe; the caller must
	// Close the returned Loaded. By default the process is stopped at once,
	// since the core needs nothing from it after the catalogue.
	Keep bool
}

// Loaded is a loaded dialect: its catalogue and where it came from.
type Loaded struct {
	// Catalogue is the dialect's catalogue, validated against ContractVersion.
	Catalogue dialect.Catalogue
	// Path is the executable that served the plugin ("" when in-process).
	Path string
	// SHA256 is the hex digest of what was started: of Path before it was
	// started or, when pinned, of the verified copy that was executed.
	SHA256 string
	// PID is the plugin's process id (0 when in-process). Unless Keep was
	// set, that process has already been stopped.
	PID int
	// BuiltIn is true when the plugin was served by LoadOptions.SelfServe.
	BuiltIn bool
	// Dialect is a live Dialect: the plugin over gRPC when loaded with Keep
	// (usable until Close), the dialect itself when in-process, nil otherwise.
	Dialect dialect.Dialect

	mu     sync.Mutex
	client *goplugin.Client
}

// Close stops a kept plugin process and waits for it. It is safe to call
// more than once and on a Loaded that keeps no process.
func (l *Loaded) Close() error {
	l.mu.Lock()
	c := l.client
	l.client = nil
	l.mu.Unlock()
	if c != nil {
		c.Kill()
	}
	return nil
}

// ChecksumMismatchError reports a plugin binary whose SHA-256 digest is not
// the pinned one. The plugin was not started.
type ChecksumMismatchError struct {
	Path string
	Want string // the pinned digest (hex, lower case)
	Got  string // the file's digest
}

// Error names the file and both digests.
func (e *ChecksumMismatchError) Error() string {
	return fmt.Sprintf("dialect plugin %s: SHA-256 mismatch: pinned %s, file has %s; refusing to start it",
		e.Path, e.Want, e.Got)
}

// CleanupClients stops every plugin process still running (those loaded with
// Keep and not closed yet). Hosts should defer it in main; it is go-plugin's
// goplugin.CleanupClients.
func CleanupClients() { goplugin.CleanupClients() }

// Load starts the dialect plugin opts designates, asks it once for its
// catalogue, validates it and, unless opts.Keep, stops the process again.
func Load(ctx context.Context, opts LoadOptions) (*Loaded, error) {
	loc, err := locate(opts)
	if err != nil {
		return nil, err
	}
	sum, verified, err := digestOrVerify(loc, opts.SHA256)
	if err != nil {
		return nil, err
	}
	release := func() {}
	if verified != nil {
		release = verified.release
	}

	logger := opts.Logger
	if logger == nil {
		logger = defaultLogger()
	}
	if verified != nil && verified.file != nil {
		logger = renamedLogger{Logger: logger, from: filepath.Base(loc.cmd.Path), to: filepath.Base(loc.path)}
	}
	cfg := &goplugin.ClientConfig{
		HandshakeConfig:  handshake,
		VersionedPlugins: pluginSets(dialect.ContractVersion, nil),
		Cmd:              loc.cmd,
		AllowedProtocols: []goplugin.Protocol{goplugin.ProtocolGRPC},
		AutoMTLS:         true,
		SkipHostEnv:      true,
		Managed:          true,
		Logger:           logger,
	}
	if dl, ok := ctx.Deadline(); ok {
		cfg.StartTimeout = max(time.Until(dl), time.Millisecond)
	}
	client := goplugin.NewClient(cfg)
	loaded, err := describePlugin(ctx, client, loc, opts, release)
	if err != nil {
		return nil, err
	}
	loaded.SHA256 = hex.EncodeToString(sum)
	if opts.Keep {
		loaded.client = client
	} else {
		client.Kill()
		loaded.Dialect = nil
	}
	return loaded, nil
}

// digestOrVerify returns the digest of the plugin binary. Unpinned, that is
// the file's digest and the path is executed as it is. Pinned, the binary is
// opened once and copied where it cannot change, the copy is digested and
// compared with the pin, and loc.cmd is set to execute that copy (see
// verifiedBinary); the caller releases it once the start attempt has ended.
func digestOrVerify(loc located, pin string) ([]byte, *verifiedBinary, error) {
	if pin == "" {
		sum, err := fileSHA256(loc.path)
		if err != nil {
			return nil, nil, fmt.Errorf("dialect plugin %s: %w", loc.path, err)
		}
		return sum, nil, nil
	}
	want := strings.ToLower(strings.TrimSpace(pin))
	if b, err := hex.DecodeString(want); err != nil || len(b) != sha256.Size {
		return nil, nil, fmt.Errorf("dialect plugin %s: SHA256 pin %q is not a hex SHA-256 digest", loc.path, pin)
	}
	v, err := verifyBinary(loc.path)
	if err != nil {
		return nil, nil, fmt.Errorf("dialect plugin %s: %w", loc.path, err)
	}
	if got := hex.EncodeToString(v.sum); got != want {
		v.release()
		return nil, nil, &ChecksumMismatchError{Path: loc.path, Want: want, Got: got}
	}
	v.configure(loc.cmd)
	if afterVerify != nil {
		afterVerify(loc.path)
	}
	return v.sum, v, nil
}

// afterVerify, set only by tests, is called with the plugin's path after a
// pinned binary was verified and before it is executed: the tests swap the
// file there to prove that what runs is what was verified.
var afterVerify func(path string)

// describePlugin starts the plugin, negotiates, and calls Describe once. On
// error it has stopped (or will stop) the process itself. started is called
// once the start attempt has ended, whatever its outcome, even after ctx
// ended.
func describePlugin(ctx context.Context, client *goplugin.Client, loc located, opts LoadOptions, started func()) (l *Loaded, err error) {
	type startResult struct {
		rpc goplugin.ClientProtocol
		err error
	}
	ch := make(chan startResult, 1)
	go func() {
		rpc, err := client.Client()
		started()
		ch <- startResult{rpc, err}
	}()
	var s startResult
	select {
	case s = <-ch:
	case <-ctx.Done():
		// Start may still be between fork and handshake: stop the process
		// once it has finished, so none is left behind.
		go func() {
			<-ch
			client.Kill()
		}()
		return nil, fmt.Errorf("dialect plugin %s: %w", loc.path, ctx.Err())
	}
	if s.err != nil {
		// go-plugin has already stopped a process that failed to start.
		return nil, startError(loc.path, s.err)
	}
	defer func() {
		if err != nil {
			client.Kill()
		}
	}()
	raw, err := s.rpc.Dispense(pluginName)
	if err != nil {
		return nil, fmt.Errorf("dialect plugin %s: %w", loc.path, err)
	}
	d, ok := raw.(*grpcClient)
	if !ok {
		return nil, fmt.Errorf("dialect plugin %s: unexpected client type %T", loc.path, raw)
	}
	l = &Loaded{Path: loc.path, BuiltIn: loc.builtIn, Dialect: d}
	if rc := client.ReattachConfig(); rc != nil {
		l.PID = rc.Pid
	}
	resp, err := d.Describe(ctx, dialect.DescribeRequest{HostContractVersion: dialect.ContractVersion})
	if err != nil {
		return nil, fmt.Errorf("dialect plugin %s: %w", loc.path, err)
	}
	if err := validateCatalogue(&resp.Catalogue, loc.path, opts.Name); err != nil {
		return nil, err
	}
	l.Catalogue = resp.Catalogue
	return l, nil
}

// InProcess links d into the host without a process: it runs Describe
// through the same JSON encoding and the same validation as Load, so unit
// tests and hosts serving built-ins see what a plugin process would send.
// The returned Loaded has no Path and no PID; Dialect is d.
func InProcess(ctx context.Context, d dialect.Dialect) (*Loaded, error) {
	in, err := json.Marshal(dialect.DescribeRequest{HostContractVersion: dialect.ContractVersion})
	if err != nil {
		return nil, err
	}
	out, err := describeJSON(ctx, d, dialect.ContractVersion, in)
	if err != nil {
		return nil, fmt.Errorf("dialect (in-process): Describe: %w", err)
	}
	resp, err := decodeDescribeResponse(out)
	if err != nil {
		return nil, fmt.Errorf("dialect (in-process): %w", err)
	}
	if err := validateCatalogue(&resp.Catalogue, "(in-process)", ""); err != nil {
		return nil, err
	}
	return &Loaded{Catalogue: resp.Catalogue, Dialect: d}, nil
}

// validateCatalogue runs (*Catalogue).Validate on what a plugin described
// and, when the caller asked for a name, checks the identity. A contract
// version error names the plugin's path.
func validateCatalogue(c *dialect.Catalogue, where, wantName string) error {
	if err := c.Validate(); err != nil {
		var cv *dialect.ContractVersionError
		if errors.As(err, &cv) {
			cv.Path = where
			return cv
		}
		return fmt.Errorf("dialect plugin %s: %w", where, err)
	}
	if wantName != "" && c.Identity.Name != wantName {
		return fmt.Errorf("dialect plugin %s: asked for dialect %q, the plugin describes %q", where, wantName, c.Identity.Name)
	}
	return nil
}

// incompatibleRE matches go-plugin's negotiation failure.
var incompatibleRE = regexp.MustCompile(`incompatible API version with plugin\. Plugin version: (\d+)`)

// startError turns go-plugin's start errors into typed ones.
func startError(path string, err error) error {
	if m := incompatibleRE.FindStringSubmatch(err.Error()); m != nil {
		v, _ := strconv.Atoi(m[1])
		return &dialect.ContractVersionError{Path: path, Host: dialect.ContractVersion, Plugin: v}
	}
	return fmt.Errorf("dialect plugin %s: start: %w", path, err)
}

// fileSHA256 digests a file.
func fileSHA256(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return nil, err
	}
	return h.Sum(nil), nil
}

// defaultLogger is quiet: warn and above on stderr unless TIDEMARK_PLUGIN_LOG
// says otherwise.
func defaultLogger() hclog.Logger {
	level := hclog.LevelFromString(os.Getenv(PluginLogEnv))
	if level == hclog.NoLevel {
		level = hclog.Warn
	}
	return hclog.New(&hclog.LoggerOptions{
		Name:   "tidemark-dialect",
		Level:  level,
		Output: os.Stderr,
	})
}
