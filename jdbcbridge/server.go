package jdbcbridge

import (
	"bufio"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

//go:embed java/tidemark/bridge/*.java
var javaSources embed.FS

// Default Debian locations of the JDBC jars (packages libh2-java and libhsqldb-java).
const (
	DefaultH2Jar     = "/usr/share/java/h2.jar"
	DefaultHSQLDBJar = "/usr/share/java/hsqldb.jar"
)

// H2Jar returns the H2 jar path: $TIDEMARK_H2_JAR or DefaultH2Jar.
func H2Jar() string { return envOr("TIDEMARK_H2_JAR", DefaultH2Jar) }

// HSQLDBJar returns the HSQLDB jar path: $TIDEMARK_HSQLDB_JAR or DefaultHSQLDBJar.
func HSQLDBJar() string { return envOr("TIDEMARK_HSQLDB_JAR", DefaultHSQLDBJar) }

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// StartOptions configures StartServer. Every field is optional.
type StartOptions struct {
	// JavaBin is the java launcher (default: $JAVA_HOME/bin/java, else "java" from PATH).
	JavaBin string
	// JavacBin is the compiler used when ClassesDir is empty (default: next to JavaBin, else
	// "javac" from PATH).
	JavacBin string
	// ClassPath lists the JDBC driver jars (default: H2Jar() and HSQLDBJar()).
	ClassPath []string
	// ClassesDir holds precompiled bridge classes (see build.sh). When empty the embedded
	// sources are compiled into os.UserCacheDir()/tidemark/jdbcbridge/<hash>.
	ClassesDir string
	// WorkDir is the java process's working directory (relative file databases land there).
	WorkDir string
	// Bind is the listen address (default 127.0.0.1); Port 0 picks a free port.
	Bind string
	Port int
	// Token is the shared secret clients must present (required for a non-loopback Bind).
	Token string
	// AllowURLPrefixes replaces the default JDBC URL allow-list.
	AllowURLPrefixes []string
	// MaxRequestBytes is the server's per-request limit: the largest request or response
	// frame, beyond which the request is refused with ErrRequestTooLarge (0: the server's
	// default, 256 MiB, or the memory budget if smaller).
	MaxRequestBytes int64
	// MemoryBudgetBytes bounds the request frames all sessions hold at once (0: the server's
	// default, a quarter of the JVM's maximum heap).
	MemoryBudgetBytes int64
	// TLSCertFile and TLSKeyFile serve TLS: a PEM certificate chain and its PKCS#8 PEM
	// private key (RSA or EC). Required, with Token, for a non-loopback Bind.
	TLSCertFile, TLSKeyFile string
	// AdminSessions lets clients of in-memory databases keep admin rights (--admin-sessions).
	// By default the server runs them as a user without admin rights that owns its schema,
	// so SQL cannot run Java code or reach files (H2 CREATE ALIAS, FILE_READ); only tools
	// that need admin rights on a trusted machine should set it.
	AdminSessions bool
	// JVMArgs are extra JVM options (e.g. "-Xmx512m").
	JVMArgs []string
	// Stderr receives the server's stderr (default: discarded).
	Stderr io.Writer
	// StartTimeout bounds compilation plus startup (default 60s).
	StartTimeout time.Duration
}

// Server is a running bridge process started by StartServer.
type Server struct {
	// Addr is host:port to put in a DSN.
	Addr string
	// Port is the TCP port the server listens on.
	Port int
	// Token is the token clients must send ("" when none).
	Token string

	cmd       *exec.Cmd
	stdin     io.WriteCloser
	waitDone  chan struct{}
	closeOnce sync.Once
}

// DSN returns a DSN for jdbcURL on this server with the given credentials and the server's token.
func (s *Server) DSN(jdbcURL, user, password string) string {
	cfg := Config{Addr: s.Addr, URL: jdbcURL, User: user, Password: password, Token: s.Token}
	return cfg.FormatDSN()
}

// Close stops the server process and waits for it to exit.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		_ = s.stdin.Close()
		_ = s.cmd.Process.Kill()
		<-s.waitDone
	})
	return nil
}

// FindJava returns the java and javac launchers that StartServer would use.
func FindJava() (java, javac string, err error) {
	if h := os.Getenv("JAVA_HOME"); h != "" {
		j, jc := filepath.Join(h, "bin", "java"), filepath.Join(h, "bin", "javac")
		if _, err := os.Stat(j); err == nil {
			if _, err := os.Stat(jc); err == nil {
				return j, jc, nil
			}
			return j, "", fmt.Errorf("jdbcbridge: javac not found in JAVA_HOME %s", h)
		}
	}
	java, err = exec.LookPath("java")
	if err != nil {
		return "", "", fmt.Errorf("jdbcbridge: java not found in PATH (install default-jdk-headless): %w", err)
	}
	javac, err = exec.LookPath("javac")
	if err != nil {
		return java, "", fmt.Errorf("jdbcbridge: javac not found in PATH (install default-jdk-headless): %w", err)
	}
	return java, javac, nil
}

// CompileClasses compiles the embedded Java sources with javac into a cache directory keyed by
// the sources' hash and returns that directory. Concurrent callers are safe.
func CompileClasses(ctx context.Context, javac string) (string, error) {
	h := sha256.New()
	var names []string
	err := fs.WalkDir(javaSources, "java", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := javaSources.ReadFile(p)
		if err != nil {
			return err
		}
		names = append(names, p)
		fmt.Fprintf(h, "%s\x00%d\x00", p, len(b))
		h.Write(b)
		return nil
	})
	if err != nil {
		return "", err
	}
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	root := filepath.Join(base, "tidemark", "jdbcbridge")
	dir := filepath.Join(root, hex.EncodeToString(h.Sum(nil))[:16])
	if _, err := os.Stat(filepath.Join(dir, "tidemark", "bridge", "Server.class")); err == nil {
		return dir, nil
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(root, "build-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	src := filepath.Join(tmp, "src")
	out := filepath.Join(tmp, "classes")
	args := []string{"-nowarn", "-encoding", "UTF-8", "-d", out}
	for _, n := range names {
		b, _ := javaSources.ReadFile(n)
		p := filepath.Join(src, filepath.FromSlash(n))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return "", err
		}
		args = append(args, p)
	}
	cmd := exec.CommandContext(ctx, javac, args...)
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("jdbcbridge: javac failed: %v\n%s", err, msg)
	}
	if err := os.Rename(out, dir); err != nil {
		// Another process may have won the race.
		if _, serr := os.Stat(filepath.Join(dir, "tidemark", "bridge", "Server.class")); serr == nil {
			return dir, nil
		}
		return "", err
	}
	return dir, nil
}

// StartServer compiles (unless opts.ClassesDir is set) and starts the bridge server, waits for
// its "LISTENING <port>" line and returns it. The process also exits when the Go process dies
// (its stdin closes). Call Close to stop it.
func StartServer(ctx context.Context, opts StartOptions) (*Server, error) {
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = 60 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, opts.StartTimeout)
	defer cancel()
	java, javac, err := opts.javaBins()
	if err != nil {
		return nil, err
	}
	cp := opts.ClassPath
	if len(cp) == 0 {
		cp = []string{H2Jar(), HSQLDBJar()}
	}
	for _, j := range cp {
		if _, err := os.Stat(j); err != nil {
			return nil, fmt.Errorf("jdbcbridge: JDBC jar missing: %w", err)
		}
	}
	classes := opts.ClassesDir
	if classes == "" {
		if classes, err = CompileClasses(ctx, javac); err != nil {
			return nil, err
		}
	}
	bind := opts.Bind
	if bind == "" {
		bind = "127.0.0.1"
	}
	cmd := exec.Command(java, opts.serverArgs(classes, cp, bind)...)
	cmd.Dir = opts.WorkDir
	cmd.Env = append(os.Environ(), "TIDEMARK_JDBCBRIDGE_TOKEN="+opts.Token) // not visible in ps
	cmd.Stderr = opts.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("jdbcbridge: start java: %w", err)
	}
	s := &Server{Token: opts.Token, cmd: cmd, stdin: stdin, waitDone: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(s.waitDone) }()
	if err := s.awaitListening(ctx, stdout, bind); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// javaBins are the java and javac to run: the options' own, else found.
// javac is needed only when the classes are not given compiled.
func (opts StartOptions) javaBins() (java, javac string, err error) {
	java, javac = opts.JavaBin, opts.JavacBin
	if java != "" && (javac != "" || opts.ClassesDir != "") {
		return java, javac, nil
	}
	j, jc, err := FindJava()
	if java == "" {
		if j == "" {
			return "", "", err
		}
		java = j
	}
	if javac == "" && opts.ClassesDir == "" {
		if jc == "" {
			return "", "", err
		}
		javac = jc
	}
	return java, javac, nil
}

// serverArgs is the JVM's command line for the bridge server.
func (opts StartOptions) serverArgs(classes string, cp []string, bind string) []string {
	args := append([]string{"-Duser.timezone=UTC"}, opts.JVMArgs...)
	args = append(args, "-cp", strings.Join(append([]string{classes}, cp...), string(os.PathListSeparator)),
		"tidemark.bridge.Server", "--port", strconv.Itoa(opts.Port), "--bind", bind, "--exit-on-stdin-eof")
	if opts.TLSCertFile != "" || opts.TLSKeyFile != "" {
		args = append(args, "--tls-cert", opts.TLSCertFile, "--tls-key", opts.TLSKeyFile)
	}
	if opts.AdminSessions {
		args = append(args, "--admin-sessions")
	}
	if opts.MaxRequestBytes > 0 {
		args = append(args, "--max-request-bytes", strconv.FormatInt(opts.MaxRequestBytes, 10))
	}
	if opts.MemoryBudgetBytes > 0 {
		args = append(args, "--memory-budget-bytes", strconv.FormatInt(opts.MemoryBudgetBytes, 10))
	}
	for _, p := range opts.AllowURLPrefixes {
		args = append(args, "--allow-url-prefix", p)
	}
	return args
}

// awaitListening reads the server's first line, "LISTENING <port>", and
// sets s.Port and s.Addr from it (a wildcard bind is dialled on loopback).
// The rest of stdout is drained so the server never blocks writing it.
func (s *Server) awaitListening(ctx context.Context, stdout io.Reader, bind string) error {
	lineCh := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		first := true
		for sc.Scan() {
			if first {
				lineCh <- sc.Text()
				first = false
			}
		}
		if first {
			close(lineCh)
		}
	}()
	select {
	case line, ok := <-lineCh:
		port, err := 0, error(nil)
		if ok && strings.HasPrefix(line, "LISTENING ") {
			port, err = strconv.Atoi(strings.TrimPrefix(line, "LISTENING "))
		}
		if !ok || port <= 0 || err != nil {
			return fmt.Errorf("jdbcbridge: server did not report LISTENING (got %q); see its stderr", line)
		}
		s.Port = port
		host := bind
		if host == "0.0.0.0" || host == "::" || host == "" {
			host = "127.0.0.1"
		}
		if strings.Contains(host, ":") {
			host = "[" + host + "]"
		}
		s.Addr = host + ":" + strconv.Itoa(port)
		return nil
	case <-ctx.Done():
		return fmt.Errorf("jdbcbridge: server start: %w", ctx.Err())
	}
}
