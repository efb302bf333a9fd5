package harness

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/tidemarkdb/tidemark/internal/testtime"
	"github.com/tidemarkdb/tidemark/jdbcbridge"
)

// H2LockTimeoutMillis is the LOCK_TIMEOUT put in every H2 URL. H2 2.1's
// default (about 4 s) is too short for appends queueing on the counter row
// of the global position table when many writers run at once.
const H2LockTimeoutMillis = 60000

func init() { JavaEngines = openJava }

// javaBridge is the one bridge server of the process, started on first use.
// Every Open gets a new in-memory database on it, so no database is shared
// between tests. The server exits when its stdin closes, which happens when
// this process ends however it ends; CloseJavaEngines stops it earlier.
var javaBridge struct {
	mu   sync.Mutex
	done bool
	srv  *jdbcbridge.Server
	err  error
	log  *tailBuffer
}

// CloseJavaEngines stops the bridge server started for the "h2" and
// "hsqldb" engines, if any; their in-memory databases go with it. A later
// Open starts a new server. It is safe to call at any time.
func CloseJavaEngines() error {
	javaBridge.mu.Lock()
	defer javaBridge.mu.Unlock()
	if javaBridge.srv != nil {
		javaBridge.srv.Close()
	}
	javaBridge.done, javaBridge.srv, javaBridge.err = false, nil, nil
	return nil
}

// javaPrerequisites returns a skip reason when Java or a jar is missing.
func javaPrerequisites() string {
	if _, _, err := jdbcbridge.FindJava(); err != nil {
		return err.Error()
	}
	for _, j := range []string{jdbcbridge.H2Jar(), jdbcbridge.HSQLDBJar()} {
		if _, err := os.Stat(j); err != nil {
			return fmt.Sprintf("JDBC jar %s missing (install libh2-java and libhsqldb-java, or set TIDEMARK_H2_JAR / TIDEMARK_HSQLDB_JAR): %v", j, err)
		}
	}
	return ""
}

func bridgeServer(ctx context.Context) (*jdbcbridge.Server, error) {
	javaBridge.mu.Lock()
	defer javaBridge.mu.Unlock()
	if javaBridge.done {
		return javaBridge.srv, javaBridge.err
	}
	if why := javaPrerequisites(); why != "" {
		javaBridge.done, javaBridge.err = true, &Skipped{Reason: "no JDBC bridge: " + why}
		return nil, javaBridge.err
	}
	log := &tailBuffer{max: 16 << 10}
	srv, err := jdbcbridge.StartServer(ctx, jdbcbridge.StartOptions{
		ClassPath:        []string{jdbcbridge.H2Jar(), jdbcbridge.HSQLDBJar()},
		AllowURLPrefixes: []string{"jdbc:h2:mem:", "jdbc:hsqldb:mem:"},
		Stderr:           log,
	})
	if err != nil {
		err = fmt.Errorf("harness: starting the JDBC bridge: %w\n%s", err, log.String())
	}
	javaBridge.srv, javaBridge.err, javaBridge.log = srv, err, log
	// A cancelled context is the caller's problem: let the next Open retry.
	javaBridge.done = srv != nil || ctx.Err() == nil
	return srv, err
}

// javaURL returns the JDBC URL, user and version query of a new in-memory
// database. DB_CLOSE_DELAY=-1 keeps an H2 memory database alive while no
// connection is open, so every connection of a pool sees the same database;
// an HSQLDB memory database lives until SHUTDOWN anyway. hsqldb.tx=mvcc takes
// effect because the first connection creates the database.
func javaURL(engine, name string) (url, user, version string) {
	if engine == EngineH2 {
		return fmt.Sprintf("jdbc:h2:mem:%s;DB_CLOSE_DELAY=-1;LOCK_TIMEOUT=%d", name, H2LockTimeoutMillis), "sa", "SELECT H2VERSION()"
	}
	tx := "mvcc"
	if engine == EngineHSQLDBLocks {
		tx = "locks"
	}
	return "jdbc:hsqldb:mem:" + name + ";hsqldb.tx=" + tx + ";sql.pad_space=false", "SA", "VALUES (DATABASE_VERSION())"
}

// openJava implements JavaEngines.
func openJava(ctx context.Context, engine string) (*Database, error) {
	if engine != EngineH2 && engine != EngineHSQLDB && engine != EngineHSQLDBLocks {
		return nil, fmt.Errorf("harness: %s is not a Java engine", engine)
	}
	srv, err := bridgeServer(ctx)
	if err != nil {
		return nil, err
	}
	url, user, versionQuery := javaURL(engine, newDBName())
	// 60 s, not the driver's 10 s: on 2 cores at load 27 (CI's packages
	// side by side) a bridge once took longer than 10 s to open a session,
	// which failed every test of the engine.
	dsn := (&jdbcbridge.Config{Addr: srv.Addr, URL: url, User: user, Token: srv.Token, DialTimeout: testtime.D(time.Minute)}).FormatDSN()
	db, err := sql.Open("jdbcbridge", dsn)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	// Creating the database on first connection also checks the bridge.
	ctx, cancel := testtime.Context(ctx, readyTimeout)
	defer cancel()
	var version string
	if err := db.QueryRowContext(ctx, versionQuery).Scan(&version); err != nil {
		return nil, fmt.Errorf("harness: new %s database on the JDBC bridge: %w", engine, err)
	}
	name := map[string]string{EngineH2: "H2", EngineHSQLDB: "HSQLDB", EngineHSQLDBLocks: "HSQLDB (LOCKS)"}[engine]
	return &Database{
		Engine:     engine,
		DriverName: "jdbcbridge",
		DSN:        dsn,
		Source:     fmt.Sprintf("in-memory %s %s on the JDBC bridge (started by harness)", name, version),
	}, nil
}

// tailBuffer keeps the last max bytes written to it (the bridge's stderr).
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

var _ io.Writer = (*tailBuffer)(nil)

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append([]byte(nil), t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.b))
}
