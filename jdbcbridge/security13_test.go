package jdbcbridge

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
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
		err := openErr(s.DSN(u, "sa", ""))
		var be *Error
		if !errors.As(err, &be) || be.State != "08004" {
			t.Errorf("%s: got %v, want a refusal with SQLSTATE 08004", u, err)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("refused URLs created files: %v", ents)
	}
}

// TestFilePrefixIsAPath: a file URL allowed by its directory opens below it, and '..' cannot
// leave it.
func TestFilePrefixIsAPath(t *testing.T) {
	startBridge(t)
	dir := t.TempDir()
	allowed := filepath.Join(dir, "allowed") + string(filepath.Separator)
	s, err := StartServer(context.Background(), StartOptions{AllowURLPrefixes: []string{"jdbc:h2:file:" + allowed}, Stderr: os.Stderr})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := openErr(s.DSN("jdbc:h2:file:"+allowed+"db", "sa", "")); err != nil {
		t.Fatalf("allowed file URL: %v", err)
	}
	escape := "jdbc:h2:file:" + allowed + ".." + string(filepath.Separator) + "escaped"
	err = openErr(s.DSN(escape, "sa", ""))
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
