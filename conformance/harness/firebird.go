package harness

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	// The pure-Go Firebird wire-protocol driver, for readiness checks and
	// for the tests of dialects on Firebird.
	_ "github.com/nakagami/firebirdsql"
)

// Firebird is started like PostgreSQL and MariaDB: the machine's own
// installation (Debian's firebird3.0-server), a private root directory and
// a free loopback port. The root directory holds
//
//   - firebird.conf: the port, 127.0.0.1 only, SuperServer, a private
//     security database, Srp authentication, wire encryption enabled but not
//     required (the driver negotiates it), databases restricted to the
//     directory;
//   - security3.fdb: made with the package's own isql over an embedded
//     connection (no server yet), SYSDBA given a random password;
//   - symlinks to the installation's plugins, intl, UDF, lib, firebird.msg
//     and plugins.conf, because Firebird finds all of them relative to the
//     root directory named by $FIREBIRD;
//   - template.fdb: one empty database (UTF8, 16K pages, asynchronous
//     writes), copied to a new file by every Open. A copy is fresh and empty
//     by construction and costs no server round trip.
//
// FIREBIRD_LOCK and FIREBIRD_TMP point into the directory too, so two test
// processes (or a system server) never share a lock table.

// fbInstall is a Firebird installation found on this machine.
type fbInstall struct {
	server string // the SuperServer binary ("firebird")
	root   string // the directory holding plugins/ and firebird.msg
	isql   string // isql (Debian: isql-fb)
}

// fbRoots are where Firebird 3 installs: Debian's split layout
// (/usr/lib/<arch>/firebird/3.0, server in /usr/sbin) or the upstream
// tarball's /opt/firebird. A variable so tests can point elsewhere.
var fbRoots = []string{"/usr/lib/*/firebird/3.0", "/usr/lib/firebird/3.0", "/opt/firebird"}

// fbLocate finds a Firebird 3 installation under fbRoots.
func fbLocate() (*fbInstall, error) {
	var roots []string
	for _, g := range fbRoots {
		m, _ := filepath.Glob(g)
		roots = append(roots, m...)
	}
	for _, root := range roots {
		if _, err := os.Stat(filepath.Join(root, "plugins", "libEngine12.so")); err != nil {
			continue
		}
		in := &fbInstall{root: root}
		for _, c := range []string{filepath.Join(root, "bin", "firebird"), "/usr/sbin/firebird"} {
			if isExecutable(c) {
				in.server = c
				break
			}
		}
		// Not "isql" from PATH: that is usually unixODBC's.
		for _, c := range []string{filepath.Join(root, "bin", "isql"), lookPath("isql-fb")} {
			if c != "" && isExecutable(c) {
				in.isql = c
				break
			}
		}
		if in.server != "" && in.isql != "" {
			return in, nil
		}
	}
	return nil, &notInstalled{"Firebird 3 is not installed here (no /usr/lib/*/firebird/3.0 with a firebird server and isql-fb; Debian: scripts/setup-debian.sh firebird3.0-server)"}
}

func isExecutable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

// fbServer is a Firebird server started by the harness.
type fbServer struct {
	dir      string
	password string
	port     int
	proc     *proc
	source   string

	mu sync.Mutex
	n  int
}

// fbShared are the installation's pieces the private root links to.
var fbShared = []string{"plugins", "intl", "UDF", "lib", "firebird.msg", "plugins.conf"}

// startFirebird makes a private root directory, a security database and a
// template database, then starts the SuperServer on a free port.
func startFirebird(ctx context.Context) (server, error) {
	in, err := fbLocate()
	if err != nil {
		return nil, err
	}
	dir, err := tempDirFor("tidemark-firebird-", nil)
	if err != nil {
		return nil, fmt.Errorf("local Firebird: %w", err)
	}
	s := &fbServer{dir: dir, password: randomHex(12)}
	start := time.Now()
	if err := s.prepare(ctx, in); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("local Firebird (%s): %w", in.root, err)
	}
	err = startWithRetry(func(port int) error {
		if err := s.writeConf(port); err != nil {
			return err
		}
		p, err := startProc("firebird", nil, s.env(), filepath.Join(dir, "server.log"), syscall.SIGTERM, in.server)
		if err != nil {
			return err
		}
		s.port = port
		if err := p.waitReady(ctx, "firebirdsql", s.dsn(filepath.Join(dir, "template.fdb"))); err != nil {
			_ = p.stop()
			if strings.Contains(err.Error(), "refused") && p.portTaken() {
				return fmt.Errorf("port %d in use: %w", port, err)
			}
			return err
		}
		s.proc = p
		return nil
	})
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("local Firebird (%s) failed to start: %w", in.server, err)
	}
	s.source = fmt.Sprintf("local server Firebird %s (started by harness in %v)", s.version(ctx), time.Since(start).Round(10*time.Millisecond))
	return s, nil
}

// portTaken is a best-effort look into the log for a bind failure.
func (p *proc) portTaken() bool {
	return strings.Contains(strings.ToLower(p.logTail()), "address already in use")
}

func (s *fbServer) env() []string {
	return []string{
		"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C", "LC_ALL=C", "TZ=UTC", "HOME=" + s.dir,
		"FIREBIRD=" + s.dir,
		"FIREBIRD_LOCK=" + filepath.Join(s.dir, "lock"),
		"FIREBIRD_TMP=" + filepath.Join(s.dir, "tmp"),
	}
}

// writeConf writes firebird.conf for port. Values and why:
//   - WireCrypt Enabled: the driver encrypts when offered (it does by
//     default); Required would refuse clients that cannot;
//   - AuthServer Srp256, Srp: the driver's default plugin is Srp256;
//   - DefaultDbCachePages 256 (2 MB at 8K pages): a suite run attaches
//     dozens of small databases, the default 2048 pages each add up;
//   - DatabaseAccess Restrict: only files under the private directory.
func (s *fbServer) writeConf(port int) error {
	conf := fmt.Sprintf(`# written by the tidemark conformance harness
RemoteServicePort = %d
RemoteBindAddress = 127.0.0.1
ServerMode = Super
SecurityDatabase = %s
AuthServer = Srp256, Srp
UserManager = Srp
WireCrypt = Enabled
DatabaseAccess = Restrict %s
TempDirectories = %s
DefaultDbCachePages = 256
`, port, filepath.Join(s.dir, "security3.fdb"), s.dir, filepath.Join(s.dir, "tmp"))
	return os.WriteFile(filepath.Join(s.dir, "firebird.conf"), []byte(conf), 0o644)
}

// prepare links the installation into the private root, then makes the
// security database and the template database with embedded connections.
func (s *fbServer) prepare(ctx context.Context, in *fbInstall) error {
	for _, d := range []string{"lock", "tmp", "data"} {
		if err := os.Mkdir(filepath.Join(s.dir, d), 0o755); err != nil {
			return err
		}
	}
	for _, name := range fbShared {
		src := filepath.Join(in.root, name)
		if _, err := os.Stat(src); err != nil {
			continue // lib/ and UDF/ are optional
		}
		if err := os.Symlink(src, filepath.Join(s.dir, name)); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(s.dir, "databases.conf"), nil, 0o644); err != nil {
		return err
	}
	if err := s.writeConf(0); err != nil { // no server yet: the port is not used
		return err
	}
	sec := filepath.Join(s.dir, "security3.fdb")
	tmpl := filepath.Join(s.dir, "template.fdb")
	steps := []struct{ db, sql string }{
		// A plain database is a valid security database: the Srp user
		// manager creates its own table (PLG$SRP) on first use.
		{"", fmt.Sprintf("CREATE DATABASE '%s';\n", sec)},
		{sec, fmt.Sprintf("CREATE USER SYSDBA PASSWORD '%s' USING PLUGIN Srp;\nCOMMIT;\n", s.password)},
		{"", fmt.Sprintf("CREATE DATABASE '%s' PAGE_SIZE 16384 DEFAULT CHARACTER SET UTF8;\n", tmpl)},
	}
	for _, st := range steps {
		args := []string{"-q", "-b", "-user", "SYSDBA"}
		if st.db != "" {
			args = append(args, st.db)
		}
		if err := runToolStdin(ctx, s.env(), st.sql, in.isql, args...); err != nil {
			return err
		}
	}
	// Asynchronous writes for the template (and so every copy): the
	// default forced writes make every commit an fsync.
	if gfix := fbTool(in, "gfix"); gfix != "" {
		if err := runTool(ctx, nil, s.env(), gfix, "-user", "SYSDBA", "-write", "async", tmpl); err != nil {
			return err
		}
	}
	return nil
}

// fbTool finds another Firebird tool next to isql.
func fbTool(in *fbInstall, name string) string {
	for _, c := range []string{filepath.Join(in.root, "bin", name), filepath.Join(filepath.Dir(in.isql), name)} {
		if isExecutable(c) {
			return c
		}
	}
	return ""
}

// runToolStdin is runTool with input on stdin (isql reads its script there).
func runToolStdin(ctx context.Context, env []string, stdin, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.SysProcAttr = sysProcAttr(nil)
	cmd.Env = env
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, tail(string(out), 30))
	}
	return nil
}

// dsn is the driver's DSN for a database file on this server.
func (s *fbServer) dsn(path string) string {
	return fmt.Sprintf("SYSDBA:%s@127.0.0.1:%d/%s", url.QueryEscape(s.password), s.port, path)
}

func (s *fbServer) version(ctx context.Context) string {
	db, err := sql.Open("firebirdsql", s.dsn(filepath.Join(s.dir, "template.fdb")))
	if err != nil {
		return "?"
	}
	defer db.Close()
	var v string
	if err := db.QueryRowContext(ctx, "SELECT rdb$get_context('SYSTEM', 'ENGINE_VERSION') FROM rdb$database").Scan(&v); err != nil {
		return "?"
	}
	return v
}

// create copies the template to a new database file.
func (s *fbServer) create(_ context.Context, driverName string) (*Database, error) {
	s.mu.Lock()
	s.n++
	name := fmt.Sprintf("%s_%d.fdb", newDBName(), s.n)
	s.mu.Unlock()
	path := filepath.Join(s.dir, "data", name)
	if err := copyFile(filepath.Join(s.dir, "template.fdb"), path); err != nil {
		return nil, fmt.Errorf("create database on %s: %w", s.source, err)
	}
	return &Database{Engine: EngineFirebird, DriverName: driverName, DSN: s.dsn(path), Source: s.source}, nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func (s *fbServer) close() error {
	var errs []error
	if s.proc != nil {
		// Killed, not asked: Firebird 3 SuperServer's SIGTERM shutdown waits
		// for its attachments and once took over 15 s in about ten runs of
		// the harness tests with every handle closed; the databases are
		// deleted right after, so a graceful stop protects nothing.
		errs = append(errs, s.proc.kill())
	}
	errs = append(errs, os.RemoveAll(s.dir))
	return joinErrs(errs)
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}
