package main

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/tidemarkdb/tidemark/conformance"
	"github.com/tidemarkdb/tidemark/jdbcbridge"
)

// dbPlaceholder is where a --jdbc-url takes each test's database name.
const dbPlaceholder = "{db}"

// jdbcFlags serve any JDBC driver through a bridge the CLI starts, so the
// suite can run a third party's plugin for an engine the harness does not
// know (Derby, Firebird's Jaybird, an older H2...).
type jdbcFlags struct {
	jars     []string
	url      string
	user     string
	password string
	jvmArgs  []string
}

func (j *jdbcFlags) set() bool { return len(j.jars) > 0 || j.url != "" }

// JDBCFlagError is a --jdbc-* flag the CLI refuses before starting Java or
// loading anything.
type JDBCFlagError struct {
	Flag   string
	Value  string
	Reason string
}

func (e *JDBCFlagError) Error() string {
	return fmt.Sprintf("--%s %q: %s", e.Flag, e.Value, e.Reason)
}

// check refuses a bad combination before anything starts: both flags, a URL
// with exactly one {db} where each test's fresh database name goes (the
// suite never shares a database between tests), jars that exist, a java
// launcher, and no other engine or DSN flag that would contradict them.
func (j *jdbcFlags) check(driver, engine, dsn string) error {
	switch {
	case len(j.jars) == 0:
		return &JDBCFlagError{Flag: "jdbc-jar", Reason: "required with --jdbc-url: the JDBC driver's jar (repeat the flag or separate jars by commas for more)"}
	case j.url == "":
		return &JDBCFlagError{Flag: "jdbc-url", Reason: "required with --jdbc-jar: the JDBC URL of a new in-memory or file database, with " + dbPlaceholder + " where each test's database name goes"}
	case !strings.HasPrefix(j.url, "jdbc:"):
		return &JDBCFlagError{Flag: "jdbc-url", Value: j.url, Reason: "not a JDBC URL (it starts with jdbc:)"}
	case strings.Count(j.url, dbPlaceholder) != 1:
		return &JDBCFlagError{Flag: "jdbc-url", Value: j.url, Reason: "must hold " + dbPlaceholder + " exactly once: each test gets a new database under a fresh name there (e.g. jdbc:derby:memory:" + dbPlaceholder + ";create=true)"}
	case driver != "" && driver != "jdbcbridge":
		return &JDBCFlagError{Flag: "driver", Value: driver, Reason: "the --jdbc-* flags run the suite through the JDBC bridge, whose driver is jdbcbridge"}
	case dsn != "":
		return &JDBCFlagError{Flag: "dsn", Value: dsn, Reason: "the --jdbc-* flags give each test its own database; leave --dsn out"}
	case engine != "":
		return &JDBCFlagError{Flag: "engine", Value: engine, Reason: "the --jdbc-* flags name the engine by its URL; leave --engine out"}
	}
	for _, jar := range j.jars {
		if _, err := os.Stat(jar); err != nil {
			return &JDBCFlagError{Flag: "jdbc-jar", Value: jar, Reason: err.Error()}
		}
	}
	if _, _, err := jdbcbridge.FindJava(); err != nil {
		return &JDBCFlagError{Flag: "jdbc-jar", Value: strings.Join(j.jars, ","), Reason: "no Java to run the bridge: " + err.Error()}
	}
	return nil
}

// bridge is a JDBC bridge the CLI started, handing out fresh databases.
type bridge struct {
	srv   *jdbcbridge.Server
	flags *jdbcFlags
	log   *lastLines
}

// startBridge starts the bridge for the driver's jars, allowing only URLs
// that begin like --jdbc-url up to its {db}.
func startBridge(ctx context.Context, j *jdbcFlags) (*bridge, error) {
	log := &lastLines{max: 16 << 10}
	prefix := j.url[:strings.Index(j.url, dbPlaceholder)]
	srv, err := jdbcbridge.StartServer(ctx, jdbcbridge.StartOptions{
		ClassPath:        j.jars,
		AllowURLPrefixes: []string{prefix},
		JVMArgs:          j.jvmArgs,
		Stderr:           log,
	})
	if err != nil {
		return nil, fmt.Errorf("starting the JDBC bridge for %s: %w\n%s", strings.Join(j.jars, ","), err, log.String())
	}
	return &bridge{srv: srv, flags: j, log: log}, nil
}

// fresh returns the DSN of a new database: --jdbc-url with a new name in
// place of {db}, opened once so a URL the driver refuses fails here.
func (b *bridge) fresh(ctx context.Context) (string, func(), error) {
	var n [6]byte
	if _, err := rand.Read(n[:]); err != nil {
		return "", nil, err
	}
	url := strings.Replace(b.flags.url, dbPlaceholder, "tm_"+hex.EncodeToString(n[:]), 1)
	dsn := (&jdbcbridge.Config{Addr: b.srv.Addr, URL: url, User: b.flags.user, Password: b.flags.password,
		Token: b.srv.Token, DialTimeout: time.Minute}).FormatDSN()
	db, err := sql.Open("jdbcbridge", dsn)
	if err != nil {
		return "", nil, err
	}
	defer db.Close()
	if err := db.PingContext(ctx); err != nil {
		return "", nil, fmt.Errorf("new database %s on the JDBC bridge: %w\n%s", url, err, b.log.String())
	}
	return dsn, nil, nil
}

// runJDBC runs the suite through a bridge started for --jdbc-*.
func runJDBC(ctx context.Context, j *jdbcFlags, target conformance.Target, out io.Writer) error {
	b, err := startBridge(ctx, j)
	if err != nil {
		return err
	}
	defer b.srv.Close()
	if _, _, err := b.fresh(ctx); err != nil {
		return err
	}
	fmt.Fprintf(out, "database: a new database per test, %s on the JDBC bridge (started by tidemark, class path %s)\n",
		j.url, strings.Join(j.jars, ","))
	target.Driver = "jdbcbridge"
	target.Fresh = b.fresh
	return runSuite(ctx, target, out)
}

// lastLines keeps the last max bytes of the bridge's stderr for errors.
type lastLines struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (l *lastLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b = append(l.b, p...)
	if over := len(l.b) - l.max; over > 0 {
		l.b = l.b[over:]
	}
	return len(p), nil
}

func (l *lastLines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return string(l.b)
}
