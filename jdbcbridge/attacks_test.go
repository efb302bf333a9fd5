package jdbcbridge

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// attack is one thing a client of the bridge must not be able to do: connect with its URL
// (and extra DSN parameters) and run its statements; the last is a query whose first column
// is read. It is refused when connecting or one of the statements fails with an *Error.
type attack struct {
	name   string
	server string // "default" (in-memory only) or "files" (a file directory and a name prefix allowed)
	url    string
	user   string
	extra  string // DSN parameters appended
	sql    []string
	absent []string // paths that must not exist afterwards
}

// attackEnv holds the servers and files the attacks run against.
type attackEnv struct {
	dir, files, secret string
	servers            map[string]*Server
}

// TestAttacksRefused lists what clients tried against the bridge, each refused: HSQLDB text
// tables reading any file, a client becoming the admin of a file database it names (Java
// code, FILE_READ, LOAD_FILE), an allowed file prefix that is not a directory boundary, and
// URL settings that bind every later session of a database (H2 IGNORECASE, HSQLDB
// sql.ignore_case). Its first subtest checks that what the rules leave works.
func TestAttacksRefused(t *testing.T) {
	env := newAttackEnv(t)
	t.Run("a file database made on the admin path serves its user", func(t *testing.T) { fileDatabaseServesItsUser(t, env) })
	f, d, secret := env.files, env.dir, env.secret
	attacks := []attack{
		{name: "hsqldb text table reads an absolute path", server: "default", url: "jdbc:hsqldb:mem:textabs", user: "SA",
			sql: []string{"CREATE TEXT TABLE t(l VARCHAR(1000))", "SET TABLE t SOURCE '" + secret + ";fs=\\u0001'", "SELECT l FROM t"}},
		{name: "hsqldb text table reads the bridge's working directory", server: "files", url: "jdbc:hsqldb:mem:textrel", user: "SA",
			sql: []string{"CREATE TEXT TABLE t(l VARCHAR(1000))", "SET TABLE t SOURCE 'secret.txt;fs=\\u0001'", "SELECT l FROM t"}},
		{name: "hsqldb text table on a file database reads a file beside it", server: "files", url: "jdbc:hsqldb:file:" + f + "/app_hs", user: "APP", extra: "password=app-pw",
			sql: []string{"CREATE TEXT TABLE t(l VARCHAR(1000))", "SET TABLE t SOURCE 'secret.txt;fs=\\u0001'", "SELECT l FROM t"}},
		{name: "hsqldb text table with a comment between the keywords", server: "default", url: "jdbc:hsqldb:mem:textcomment", user: "SA",
			sql: []string{"CREATE /* x */ TEXT\n\tTABLE t(l VARCHAR(1000))", "SET TABLE t SOURCE '" + secret + ";fs=\\u0001'", "SELECT l FROM t"}},
		{name: "h2 new file database, Java source alias", server: "files", url: "jdbc:h2:file:" + f + "/new1", user: "sa",
			sql:    []string{`CREATE ALIAS JP AS 'String p(String k) { return System.getProperty(k); }'`, "SELECT JP('java.home')"},
			absent: []string{f + "/new1.mv.db"}},
		{name: "h2 new file database, FILE_READ", server: "files", url: "jdbc:h2:file:" + f + "/new2", user: "sa",
			sql: []string{"SELECT CAST(FILE_READ('" + secret + "', 'UTF-8') AS VARCHAR)"}, absent: []string{f + "/new2.mv.db"}},
		{name: "hsqldb new file database, LOAD_FILE", server: "files", url: "jdbc:hsqldb:file:" + f + "/new3", user: "SA",
			sql: []string{"VALUES (CAST(LOAD_FILE('" + secret + "', 'UTF-8') AS VARCHAR(1000)))"}, absent: []string{f + "/new3.properties", f + "/new3.script"}},
		{name: "hsqldb file database created despite ifexists", server: "files", url: "jdbc:hsqldb:file:" + f + "/new4;ifexists=false", user: "SA",
			sql: []string{"VALUES (1)"}, absent: []string{f + "/new4.properties", f + "/new4.script"}},
		{name: "h2 file database created despite IFEXISTS", server: "files", url: "jdbc:h2:file:" + f + "/new5", user: "sa", extra: "prop.IFEXISTS=FALSE",
			sql: []string{"SELECT 1"}, absent: []string{f + "/new5.mv.db"}},
		{name: "h2 file database opened by its admin", server: "files", url: "jdbc:h2:file:" + f + "/legacy", user: "sa",
			sql: []string{"SELECT CAST(FILE_READ('" + secret + "', 'UTF-8') AS VARCHAR)"}},
		{name: "h2 file database opened by the bridge's admin name", server: "files", url: "jdbc:h2:file:" + f + "/app_h2", user: "tidemark_bridge_admin",
			sql: []string{"SELECT 1"}},
		{name: "h2 file database, FILE_READ as its user", server: "files", url: "jdbc:h2:file:" + f + "/app_h2", user: "APP", extra: "password=app-pw",
			sql: []string{"SELECT CAST(FILE_READ('" + secret + "', 'UTF-8') AS VARCHAR)"}},
		{name: "hsqldb file database, LOAD_FILE as its user", server: "files", url: "jdbc:hsqldb:file:" + f + "/app_hs", user: "APP", extra: "password=app-pw",
			sql: []string{"VALUES (CAST(LOAD_FILE('" + secret + "', 'UTF-8') AS VARCHAR(1000)))"}},
		{name: "file prefix is a directory, not a name prefix", server: "files", url: "jdbc:h2:file:" + d + "/preEVIL/db", user: "sa",
			sql: []string{"SELECT 1"}, absent: []string{d + "/preEVIL"}},
		{name: "h2 IGNORECASE in the URL", server: "default", url: "jdbc:h2:mem:ic1;IGNORECASE=TRUE", user: "sa",
			sql: ignoreCaseProbe},
		{name: "h2 IGNORECASE as a property", server: "default", url: "jdbc:h2:mem:ic2", user: "sa", extra: "prop.IGNORECASE=TRUE",
			sql: ignoreCaseProbe},
		{name: "h2 MODE in the URL", server: "default", url: "jdbc:h2:mem:ic3;MODE=MySQL", user: "sa", sql: []string{"SELECT 1"}},
		{name: "hsqldb sql.ignore_case in the URL", server: "default", url: "jdbc:hsqldb:mem:ic4;sql.ignore_case=true", user: "SA",
			sql: ignoreCaseProbe},
		{name: "hsqldb sql.ignore_case as a property", server: "default", url: "jdbc:hsqldb:mem:ic5", user: "SA", extra: "prop.sql.ignore_case=true",
			sql: ignoreCaseProbe},
		{name: "hsqldb sql.pad_space=true binds every later session", server: "default", url: "jdbc:hsqldb:mem:ic6;sql.pad_space=true", user: "SA",
			sql: []string{"VALUES (1)"}},
	}
	for _, a := range attacks {
		t.Run(a.name, func(t *testing.T) {
			s := env.servers[a.server]
			if s == nil {
				t.Fatalf("no %q server", a.server)
			}
			dsn := testDSN(s, a.url, a.user, "")
			if a.extra != "" {
				dsn += "&" + a.extra
			}
			got, err := runAttack(dsn, a.sql)
			var be *Error
			switch {
			case err == nil:
				t.Errorf("not refused: returned %q", got)
			case !errors.As(err, &be):
				t.Errorf("got %v, want a refusal (*jdbcbridge.Error)", err)
			default:
				t.Logf("refused: %v", err)
			}
			if strings.Contains(got, "top secret") || strings.Contains(got, "746f7020736563726574") {
				t.Errorf("the secret file was read: %q", got)
			}
			for _, p := range a.absent {
				if _, err := os.Stat(p); err == nil {
					t.Errorf("%s was created", p)
				}
			}
		})
	}
}

// fileDatabaseServesItsUser: a file database made on the admin path opens for its user, who
// owns a schema of its name and can run Tidemark's kind of DDL; creating it twice fails.
func fileDatabaseServesItsUser(t *testing.T, env *attackEnv) {
	s := env.servers["files"]
	for _, u := range []string{"jdbc:h2:file:" + env.files + "/app_h2;LOCK_TIMEOUT=60000", "jdbc:hsqldb:file:" + env.files + "/app_hs;hsqldb.tx=mvcc"} {
		db, err := sql.Open("jdbcbridge", testDSN(s, u, "app", "app-pw"))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		mustExec(t, db, "CREATE TABLE owned (id INT PRIMARY KEY, v VARCHAR(10))")
		mustExec(t, db, "INSERT INTO owned VALUES (1, 'x')")
		var n int
		if err := db.QueryRow("SELECT COUNT(*) FROM APP.owned").Scan(&n); err != nil || n != 1 {
			t.Errorf("%s: %d rows in APP.owned (%v)", u, n, err)
		}
	}
	err := CreateFileDatabase(context.Background(), StartOptions{}, "jdbc:h2:file:"+env.files+"/app_h2", "other", "pw", "admin-pw")
	if err == nil {
		t.Error("an existing file database was created again")
	}
}

func newAttackEnv(t *testing.T) *attackEnv {
	t.Helper()
	def := startBridge(t)
	d := t.TempDir()
	env := &attackEnv{dir: d, files: filepath.Join(d, "files"), secret: filepath.Join(d, "files", "secret.txt"), servers: map[string]*Server{"default": def}}
	if err := os.MkdirAll(env.files, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(env.secret, []byte("top secret line\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	filePrefixes := []string{"jdbc:h2:file:" + env.files + "/", "jdbc:hsqldb:file:" + env.files + "/", "jdbc:h2:mem:", "jdbc:hsqldb:mem:"}
	// A database made the old way, by connecting as its admin (a tool with admin sessions).
	legacy, err := StartServer(ctx, StartOptions{AdminSessions: true, AllowURLPrefixes: filePrefixes, Stderr: os.Stderr})
	if err != nil {
		t.Fatal(err)
	}
	if err := openErr(testDSN(legacy, "jdbc:h2:file:"+env.files+"/legacy", "sa", "")); err != nil {
		t.Errorf("legacy database: %v", err)
	}
	legacy.Close()
	for _, u := range []string{"jdbc:h2:file:" + env.files + "/app_h2", "jdbc:hsqldb:file:" + env.files + "/app_hs"} {
		if err := CreateFileDatabase(ctx, StartOptions{}, u, "app", "app-pw", "admin-pw"); err != nil {
			t.Errorf("admin path: %v", err)
		}
	}
	// jdbc:h2:file:DIR/pre names a database (or a directory), not every name starting so.
	files, err := StartServer(ctx, StartOptions{WorkDir: env.files, AllowURLPrefixes: append(filePrefixes, "jdbc:h2:file:"+d+"/pre"), Stderr: os.Stderr})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { files.Close() })
	env.servers["files"] = files
	return env
}

// runAttack connects with dsn and runs stmts; the last is a query whose first column it
// returns. The error is the first refusal met.
func runAttack(dsn string, stmts []string) (string, error) {
	db, err := sql.Open("jdbcbridge", dsn)
	if err != nil {
		return "", err
	}
	defer db.Close()
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	for _, q := range stmts[:len(stmts)-1] {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return "", err
		}
	}
	var v sql.NullString
	err = conn.QueryRowContext(ctx, stmts[len(stmts)-1]).Scan(&v)
	return v.String, err
}

// ignoreCaseProbe returns a row only when comparisons of a new column ignore case.
var ignoreCaseProbe = []string{"CREATE TABLE ic (v VARCHAR(10))", "INSERT INTO ic VALUES ('acc-1')", "SELECT v FROM ic WHERE v = 'ACC-1'"}
