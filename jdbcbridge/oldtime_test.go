package jdbcbridge

import (
	"context"
	"database/sql"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestDriverRefusingJavaTime serves H2 through a driver that refuses
// java.time both ways (SQLSTATE 22005), as a JDBC 4.1-era driver does: the
// bridge binds and reads DATE, TIME, TIMESTAMP and TIMESTAMP WITH TIME ZONE
// through java.sql.Date/Time/Timestamp instead.
func TestDriverRefusingJavaTime(t *testing.T) {
	if why := prerequisites(); why != "" {
		t.Skipf("needs Java and the JDBC jars: %s", why)
	}
	_, javac, err := FindJava()
	if err != nil {
		t.Skipf("no Java compiler to build the refusing test driver: %v", err)
	}
	classes := t.TempDir()
	src, _ := filepath.Abs("testdata/olddriver/oldjdbc/OldDriver.java")
	if out, err := exec.Command(javac, "-d", classes, src).CombinedOutput(); err != nil {
		t.Fatalf("javac: %v\n%s", err, out)
	}
	services := filepath.Join(classes, "META-INF", "services")
	if err := os.MkdirAll(services, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(services, "java.sql.Driver"), []byte("oldjdbc.OldDriver\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), backstop(2*time.Minute))
	defer cancel()
	srv, err := StartServer(ctx, StartOptions{ClassPath: []string{H2Jar(), classes}, AllowURLPrefixes: []string{"jdbc:old:"}, Stderr: os.Stderr})
	if err != nil {
		t.Fatalf("start bridge: %v", err)
	}
	defer srv.Close()
	db, err := sql.Open("jdbcbridge", testDSN(srv, "jdbc:old:jdbc:h2:mem:oldtime", "sa", ""))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1) // one session keeps the in-memory database alive
	if _, err := db.ExecContext(ctx, `CREATE TABLE t (d DATE, tm TIME(6), ts TIMESTAMP(6), tz TIMESTAMP(6) WITH TIME ZONE)`); err != nil {
		t.Fatalf("create: %v", err)
	}
	day := time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC)
	clock := time.Date(0, 1, 1, 23, 59, 58, 123456000, time.UTC)
	at := time.Date(2024, 3, 10, 12, 34, 56, 789012000, time.UTC)
	if _, err := db.ExecContext(ctx, `INSERT INTO t VALUES (?, ?, ?, ?)`, day, clock, at, at); err != nil {
		t.Fatalf("insert through a driver refusing java.time: %v", err)
	}
	var d, tm, ts, tz time.Time
	if err := db.QueryRowContext(ctx, `SELECT d, tm, ts, tz FROM t`).Scan(&d, &tm, &ts, &tz); err != nil {
		t.Fatalf("select through a driver refusing java.time: %v", err)
	}
	for _, c := range []struct {
		what      string
		got, want time.Time
	}{{"DATE", d, day}, {"TIME", tm, clock}, {"TIMESTAMP", ts, at}, {"TIMESTAMP WITH TIME ZONE", tz, at}} {
		if !c.got.Equal(c.want) {
			t.Errorf("%s: read back %v, wrote %v", c.what, c.got, c.want)
		}
	}
}
