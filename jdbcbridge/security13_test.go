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

// TestDefaultAllowListInMemoryOnly: with no --allow-url-prefix the bridge opens in-memory
// databases only; file and network URLs are refused (08004) and no file is created.
func TestDefaultAllowListInMemoryOnly(t *testing.T) {
	s := startBridge(t)
	dir := t.TempDir()
	for _, u := range []string{
		"jdbc:h2:file:" + filepath.Join(dir, "h2db"),
		"jdbc:h2:" + filepath.Join(dir, "implicit"),
		"jdbc:h2:tcp://127.0.0.1:1/x",
		"jdbc:hsqldb:file:" + filepath.Join(dir, "hsdb"),
		"jdbc:hsqldb:hsql://127.0.0.1:1/x",
	} {
		err := openErr(testDSN(s, u, "sa", ""))
		var be *Error
		if !errors.As(err, &be) || be.State != "08004" {
			t.Errorf("%s: got %v, want a refusal with SQLSTATE 08004", u, err)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("refused URLs created files: %v", ents)
	}
}

// TestFilePrefixIsAPath: a file URL allowed by its directory opens below it (a database made
// on the admin path, for its user), and '..' cannot leave it.
func TestFilePrefixIsAPath(t *testing.T) {
	startBridge(t)
	dir := t.TempDir()
	allowed := filepath.Join(dir, "allowed") + string(filepath.Separator)
	s, err := StartServer(context.Background(), StartOptions{AllowURLPrefixes: []string{"jdbc:h2:file:" + allowed}, Stderr: os.Stderr})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := CreateFileDatabase(context.Background(), StartOptions{}, "jdbc:h2:file:"+allowed+"db", "app", "pw", "admin-pw"); err != nil {
		t.Fatal(err)
	}
	if err := openErr(testDSN(s, "jdbc:h2:file:"+allowed+"db", "app", "pw")); err != nil {
		t.Fatalf("allowed file URL: %v", err)
	}
	escape := "jdbc:h2:file:" + allowed + ".." + string(filepath.Separator) + "escaped"
	err = openErr(testDSN(s, escape, "sa", ""))
	var be *Error
	if !errors.As(err, &be) || be.State != "08004" {
		t.Fatalf("%s: got %v, want 08004", escape, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "escaped.mv.db")); err == nil {
		t.Fatal("the '..' URL created a database outside the allowed directory")
	}
}

// TestHSQLDBJavaRoutinesRefused: HSQLDB may not call arbitrary Java methods as SQL routines
// (CREATE FUNCTION ... EXTERNAL NAME 'CLASSPATH:java.lang.System.getProperty' returned the
// JDK's path before).
func TestHSQLDBJavaRoutinesRefused(t *testing.T) {
	db := engines[1].open(t)
	_, err := db.Exec(`CREATE FUNCTION jprop(k VARCHAR(100)) RETURNS VARCHAR(1000) LANGUAGE JAVA DETERMINISTIC NO SQL EXTERNAL NAME 'CLASSPATH:java.lang.System.getProperty'`)
	if err == nil {
		var home sql.NullString
		qerr := db.QueryRow(`VALUES (jprop('java.home'))`).Scan(&home)
		t.Fatalf("a Java routine was created and returned %q (%v)", home.String, qerr)
	}
	var be *Error
	if !errors.As(err, &be) {
		t.Fatalf("got %v, want a database error", err)
	}
	t.Logf("refused: %v", err)
}

// TestSessionsHaveNoAdminRights: a client of an in-memory database runs as a user without
// admin rights that owns its schema. H2 then refuses everything that runs Java code or
// reaches files (before: CREATE ALIAS ran System.getProperty, FILE_READ returned a file),
// HSQLDB refuses SCRIPT to a file; creating tables, indexes and sequences still works.
func TestSessionsHaveNoAdminRights(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(dir, "secret.txt")
	if err := os.WriteFile(secret, []byte("top secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.sql")
	refused := map[string][]string{
		"h2": {
			`CREATE ALIAS JPROP AS 'String p(String k) { return System.getProperty(k); }'`,
			`CREATE ALIAS JPROP2 FOR "java.lang.System.getProperty"`,
			`SELECT FILE_READ('` + secret + `')`,
			`SELECT FILE_WRITE('x', '` + out + `')`,
			`SCRIPT TO '` + out + `'`,
			`RUNSCRIPT FROM '` + secret + `'`,
			`SELECT * FROM CSVREAD('` + secret + `')`,
			`CALL CSVWRITE('` + out + `', 'SELECT 1')`,
			`CREATE LINKED TABLE lt('org.h2.Driver', 'jdbc:h2:mem:other', 'sa', '', 'T')`,
			`CALL LINK_SCHEMA('L', '', 'jdbc:h2:mem:other2', 'sa', '', 'PUBLIC')`,
			`SET DB_CLOSE_DELAY 0`,
		},
		"hsqldb": {
			`SCRIPT '` + out + `'`,
			`CREATE FUNCTION jprop(k VARCHAR(100)) RETURNS VARCHAR(1000) LANGUAGE JAVA DETERMINISTIC NO SQL EXTERNAL NAME 'CLASSPATH:java.lang.System.getProperty'`,
			`CREATE USER intruder PASSWORD 'x' ADMIN`,
			`SET DATABASE DEFAULT TABLE TYPE CACHED`,
		},
	}
	forEngines(t, func(t *testing.T, e engine) {
		db := e.open(t)
		for _, q := range refused[e.name] {
			_, err := db.Exec(q)
			var be *Error
			if !errors.As(err, &be) {
				t.Errorf("%s: got %v, want a refusal", q, err)
			}
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("a statement wrote %s", out)
		}
		for _, q := range []string{
			"CREATE TABLE owned (id INT PRIMARY KEY, v VARCHAR(10))",
			"CREATE UNIQUE INDEX idx_owned_v ON owned (v)",
			"CREATE SEQUENCE owned_seq",
			"INSERT INTO owned VALUES (1, 'x')",
		} {
			mustExec(t, db, q)
		}
		var schema string
		q := map[string]string{"h2": "SELECT CURRENT_SCHEMA", "hsqldb": "VALUES (CURRENT_SCHEMA)"}[e.name]
		if err := db.QueryRow(q).Scan(&schema); err != nil || schema != strings.ToUpper(e.user) {
			t.Errorf("current schema %q (%v), want the user's own %q", schema, err, strings.ToUpper(e.user))
		}
	})
}

// TestBridgeAdminNameRefused: the bridge's internal admin user cannot be chosen by a client.
func TestBridgeAdminNameRefused(t *testing.T) {
	s := startBridge(t)
	for _, e := range engines {
		err := openErr(testDSN(s, e.url("adminname"), "tidemark_bridge_admin", ""))
		var be *Error
		if !errors.As(err, &be) || be.State != "28000" {
			t.Errorf("%s: got %v, want 28000", e.name, err)
		}
	}
}
