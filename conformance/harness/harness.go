// Package harness gives the conformance suite a real, empty database per
// engine, or a precise reason why none can be had.
//
// For every server engine the sources are tried in this order:
//
//  1. a DSN in the environment (TIDEMARK_POSTGRES_DSN, TIDEMARK_MARIADB_DSN,
//     TIDEMARK_MYSQL_DSN, TIDEMARK_SQLSERVER_DSN). Each Open creates a new
//     database tm_<random> on that server when the account may; otherwise the
//     DSN is used as it is and Database.Note says so;
//  2. a local server that the harness starts itself from the machine's own
//     installation (PostgreSQL from /usr/lib/postgresql/*/bin or pg_config,
//     MariaDB or MySQL from mariadbd/mysqld on PATH or in /usr/sbin);
//  3. a container started with ory/dockertest, when a Docker daemon answers a
//     ping within a few seconds;
//
// and otherwise Open returns a *Skipped whose Reason names every source that
// was tried and why it failed. An installed server that fails to start is a
// real error, not a skip: a broken installation must not hide as a skipped
// test.
//
// The "mysql" engine falls back to the local MariaDB server when there is no
// MySQL DSN, no local MySQL and no Docker; Database.Note then says that MySQL
// is being stood in for by MariaDB.
//
// Firebird 3 ("firebird", for third-party-style dialects such as
// examples/firebird) comes only from a local installation (Debian's
// firebird3.0-server): see firebird.go.
//
// SQLite needs no server: every Open makes a new file in a temporary
// directory. H2 and HSQLDB come from the JDBC bridge through the JavaEngines
// hook.
//
// Setting TIDEMARK_REQUIRE_ENGINES to a comma-separated list of engines (or
// "all") turns a *Skipped for those engines into a plain error, so that CI
// can insist that an engine really ran.
//
// Server processes started by the harness get SIGKILL when the test process
// dies (Pdeathsig) and are shut down gracefully by Provider.Close.
package harness

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"

	// Drivers used for readiness checks and for creating fresh databases.
	_ "github.com/go-sql-driver/mysql"
	_ "github.com/jackc/pgx/v5/stdlib"
	_ "github.com/lib/pq"
	_ "github.com/microsoft/go-mssqldb"
	_ "modernc.org/sqlite"
)

// Engine names accepted by Provider.Open.
const (
	EnginePostgres  = "postgres"
	EngineMariaDB   = "mariadb"
	EngineMySQL     = "mysql"
	EngineSQLServer = "sqlserver"
	EngineH2        = "h2"
	EngineHSQLDB    = "hsqldb"
	// EngineHSQLDBLocks is HSQLDB in LOCKS transaction control (its
	// default): a locking engine, whose readers wait for writers.
	EngineHSQLDBLocks = "hsqldb-locks"
	EngineSQLite      = "sqlite"
	// EngineFirebird is Firebird 3, served to third-party-style dialects
	// (examples/firebird); no built-in plugin runs on it.
	EngineFirebird = "firebird"
)

// Engines lists every engine name Provider.Open knows, in a stable order.
var Engines = []string{EnginePostgres, EngineMariaDB, EngineMySQL, EngineSQLServer, EngineH2, EngineHSQLDB, EngineHSQLDBLocks, EngineSQLite, EngineFirebird}

// Database is a ready, empty database for one test run.
type Database struct {
	// Engine is one of "postgres", "mariadb", "mysql", "sqlserver", "h2",
	// "hsqldb", "sqlite", "firebird".
	Engine string
	// DriverName is the database/sql driver name to use with DSN, e.g.
	// "pgx", "postgres" (lib/pq), "mysql", "sqlite", "jdbcbridge",
	// "sqlserver".
	DriverName string
	// DSN is the data source name for DriverName.
	DSN string
	// Source says, for people, where the database comes from, e.g.
	// "env TIDEMARK_POSTGRES_DSN", "local server PostgreSQL 15.18 (started
	// by harness)", "dockertest mysql:8.4".
	Source string
	// Note is empty unless the database differs from what the engine name
	// promises, e.g. when engine "mysql" is served by MariaDB, or when a
	// DSN from the environment is used as it is because no new database
	// could be created on its server.
	Note string
}

// Skipped is returned (as error) when no database can be provided; Reason
// says why, e.g. "no server: MySQL 8 is not installed here and Docker is not
// available (docker daemon not reachable: ...)".
type Skipped struct{ Reason string }

// Error returns the reason prefixed with "skipped: ".
func (s *Skipped) Error() string { return "skipped: " + s.Reason }

// JavaEngines provides the "h2" and "hsqldb" engines through the JDBC bridge
// (package jdbcbridge, driver name "jdbcbridge"). It is nil until the bridge
// is wired in; while nil, Open returns a *Skipped for those engines.
//
// An implementation must return a fresh, empty database on each call (for
// example a new in-memory or temporary-file database on a bridge server it
// starts once), return a *Skipped when Java or the engine's jar is missing,
// and register its own cleanup, since Provider.Close does not know about
// bridge servers.
var JavaEngines func(ctx context.Context, engine string) (*Database, error)

// envVar maps a server engine to the environment variable holding its DSN.
var envVar = map[string]string{
	EnginePostgres:  "TIDEMARK_POSTGRES_DSN",
	EngineMariaDB:   "TIDEMARK_MARIADB_DSN",
	EngineMySQL:     "TIDEMARK_MYSQL_DSN",
	EngineSQLServer: "TIDEMARK_SQLSERVER_DSN",
}

// drivers lists the driver names accepted per engine; the first is the
// default used when Open gets an empty driverName.
var drivers = map[string][]string{
	EnginePostgres:    {"pgx", "postgres"},
	EngineMariaDB:     {"mysql"},
	EngineMySQL:       {"mysql"},
	EngineSQLServer:   {"sqlserver"},
	EngineH2:          {"jdbcbridge"},
	EngineHSQLDB:      {"jdbcbridge"},
	EngineHSQLDBLocks: {"jdbcbridge"},
	EngineSQLite:      {"sqlite"},
	EngineFirebird:    {"firebirdsql", "firebirdsql-guarded"},
}

// server is one running (or reachable) database server shared by all Opens
// of an engine.
type server interface {
	// create makes a fresh empty database and returns it for driverName.
	create(ctx context.Context, driverName string) (*Database, error)
	// close drops what was created and stops what was started.
	close() error
}

// slot holds the outcome of locating an engine's server; mu serialises the
// first, slow attempt so concurrent Opens wait for it instead of racing.
type slot struct {
	mu   sync.Mutex
	done bool
	srv  server
	err  error
}

// Provider starts/locates servers lazily and shares one server per engine
// across a process; each Open call returns a FRESH empty database (CREATE
// DATABASE tm_<random> on server engines, new temp file for sqlite) so tests
// do not see each other's tables. A Provider is safe for concurrent use.
type Provider struct {
	mu     sync.Mutex
	slots  map[string]*slot
	closed bool

	dockerOnce sync.Once
	docker     *dockerEnv
	dockerErr  error
}

// NewProvider returns a Provider that has started nothing yet. The first
// call in a process also removes temporary directories left behind by
// earlier test processes that died without Close.
func NewProvider() *Provider {
	sweepStale()
	return &Provider{slots: map[string]*slot{}}
}

// Open returns a fresh empty database of the given engine for the given
// database/sql driver name (empty means the engine's default driver). It
// returns a *Skipped when the engine is unavailable here, and another error
// when something that should work fails.
func (p *Provider) Open(ctx context.Context, engine, driverName string) (*Database, error) {
	db, err := p.open(ctx, engine, driverName)
	var sk *Skipped
	if errors.As(err, &sk) && required(engine) {
		return nil, fmt.Errorf("engine %s is required by TIDEMARK_REQUIRE_ENGINES but unavailable: %s", engine, sk.Reason)
	}
	return db, err
}

func (p *Provider) open(ctx context.Context, engine, driverName string) (*Database, error) {
	names, ok := drivers[engine]
	if !ok {
		return nil, fmt.Errorf("harness: unknown engine %q (known: %s)", engine, strings.Join(Engines, ", "))
	}
	if driverName == "" {
		driverName = names[0]
	}
	if !contains(names, driverName) {
		return nil, fmt.Errorf("harness: engine %s cannot be used with driver %q (use one of: %s)", engine, driverName, strings.Join(names, ", "))
	}
	switch engine {
	case EngineH2, EngineHSQLDB, EngineHSQLDBLocks:
		if JavaEngines == nil {
			return nil, &Skipped{Reason: "JDBC bridge not wired (harness.JavaEngines is nil)"}
		}
		return JavaEngines(ctx, engine)
	}

	s, err := p.slot(engine)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	if !s.done {
		s.srv, s.err = p.locate(ctx, engine)
		// A cancelled context is the caller's problem, not the engine's:
		// let the next Open try again.
		s.done = ctx.Err() == nil || s.srv != nil
	}
	srv, serr := s.srv, s.err
	s.mu.Unlock()
	if serr != nil {
		return nil, serr
	}
	return srv.create(ctx, driverName)
}

func (p *Provider) slot(engine string) (*slot, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, errors.New("harness: Open on a closed Provider")
	}
	s := p.slots[engine]
	if s == nil {
		s = &slot{}
		p.slots[engine] = s
	}
	return s, nil
}

// locate finds or starts the server for an engine, in the documented order.
func (p *Provider) locate(ctx context.Context, engine string) (server, error) {
	if engine == EngineSQLite {
		return newSQLite()
	}
	if v := envVar[engine]; os.Getenv(v) != "" {
		return newEnvServer(ctx, engine, v, os.Getenv(v))
	}
	var why []string
	switch engine {
	case EnginePostgres:
		srv, err := startPostgres(ctx)
		if srv != nil || !isNotInstalled(err) {
			return srv, err
		}
		why = append(why, err.Error())
	case EngineMariaDB:
		srv, err := p.mariaDB(ctx)
		if srv != nil {
			return borrowed{srv}, nil
		}
		if !isNotInstalled(err) {
			return nil, err
		}
		why = append(why, err.Error())
	case EngineMySQL:
		srv, err := startMySQL(ctx, flavourMySQL)
		if srv != nil || !isNotInstalled(err) {
			return srv, err
		}
		why = append(why, err.Error())
	case EngineFirebird:
		// A local installation only: no DSN variable, no container.
		srv, err := startFirebird(ctx)
		if srv != nil || !isNotInstalled(err) {
			return srv, err
		}
		return nil, &Skipped{Reason: "no server: " + err.Error()}
	case EngineSQLServer:
		why = append(why, "SQL Server cannot be installed locally here and no "+envVar[engine]+" is set")
	}

	srv, derr := p.dockerServer(ctx, engine)
	if srv != nil || (derr != nil && !isNotInstalled(derr)) {
		return srv, derr
	}
	why = append(why, derr.Error())

	if engine == EngineMySQL {
		// Last resort: let MariaDB stand in for MySQL, and say so.
		if ms, err := p.mariaDB(ctx); err == nil {
			return &standIn{borrowed: borrowed{ms}, engine: EngineMySQL, note: "engine mysql is served by MariaDB, not MySQL: " + strings.Join(why, "; ")}, nil
		} else if !isNotInstalled(err) {
			return nil, err
		} else {
			why = append(why, "no MariaDB to stand in either ("+err.Error()+")")
		}
	}
	return nil, &Skipped{Reason: "no server: " + strings.Join(why, " and ")}
}

// mariaDB returns the shared local MariaDB server, starting it if needed;
// the "mariadb" engine and the MySQL stand-in share it.
func (p *Provider) mariaDB(ctx context.Context) (server, error) {
	s, err := p.slot("mariadb-local")
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.done {
		s.srv, s.err = startMySQL(ctx, flavourMariaDB)
		s.done = ctx.Err() == nil || s.srv != nil
	}
	return s.srv, s.err
}

// Close stops every server the Provider started, drops databases it created
// on servers named by the environment, and removes its temporary
// directories. It is safe to call more than once.
func (p *Provider) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	slots := p.slots
	p.slots = nil
	p.mu.Unlock()

	var errs []error
	for _, s := range slots {
		s.mu.Lock()
		if s.srv != nil {
			errs = append(errs, s.srv.close())
		}
		s.srv = nil
		s.mu.Unlock()
	}
	return errors.Join(errs...)
}

// borrowed uses a server owned by another slot; closing it is a no-op
// because the owning slot closes the server.
type borrowed struct{ server }

func (borrowed) close() error { return nil }

// standIn serves one engine with another engine's server and notes it.
type standIn struct {
	borrowed
	engine string
	note   string
}

func (s *standIn) create(ctx context.Context, driverName string) (*Database, error) {
	db, err := s.server.create(ctx, driverName)
	if err != nil {
		return nil, err
	}
	db.Engine = s.engine
	// "local server MariaDB 10.11.19 (started by harness in 1s)" becomes
	// "mysql plugin on MariaDB 10.11.19 (local server, started by harness in 1s)".
	src := strings.TrimPrefix(db.Source, "local server ")
	if src != db.Source {
		src = strings.Replace(src, "(", "(local server, ", 1)
	}
	db.Source = s.engine + " plugin on " + src
	db.Note = s.note
	return db, nil
}

// notInstalled marks a source that is simply absent here (as opposed to
// present and failing), so the next source may be tried.
type notInstalled struct{ msg string }

func (e *notInstalled) Error() string { return e.msg }

func isNotInstalled(err error) bool {
	var ni *notInstalled
	return errors.As(err, &ni)
}

// Required reports whether TIDEMARK_REQUIRE_ENGINES asks for engine (or
// "all"): a test that cannot run it must then fail instead of skipping.
func Required(engine string) bool { return required(engine) }

func required(engine string) bool {
	for _, e := range strings.Split(os.Getenv("TIDEMARK_REQUIRE_ENGINES"), ",") {
		e = strings.TrimSpace(e)
		if e == "all" || e == engine {
			return true
		}
	}
	return false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// newDBName returns a fresh database name tm_<16 hex digits>.
func newDBName() string {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err)
	}
	return "tm_" + hex.EncodeToString(b[:])
}

// pingWith opens driverName/dsn and pings it once.
func pingWith(ctx context.Context, driverName, dsn string) error {
	db, err := sql.Open(driverName, dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	return db.PingContext(ctx)
}
