package jdbcbridge

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"os"
	"strings"
	"testing"
)

// limitBytes is the per-request limit of the bridge these tests start (the JVM heap stays
// at the JVM's default, as the harness leaves it).
const limitBytes = 1 << 20

// TestRequestOverLimitRefused: a request over the bridge's per-request limit is refused with
// ErrRequestTooLarge (54000), by the driver before sending and by the server when a client
// does not check; a result row over the limit too. Each time the connection keeps working.
func TestRequestOverLimitRefused(t *testing.T) {
	startBridge(t)
	s, err := StartServer(context.Background(), StartOptions{MaxRequestBytes: limitBytes, Stderr: os.Stderr})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	big := strings.Repeat("x", 2*limitBytes)
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			ctx := context.Background()
			cfg, err := ParseDSN(testDSN(s, e.url("limits_"+e.name), e.user, ""))
			if err != nil {
				t.Fatal(err)
			}
			dc, err := NewConnector(*cfg).Connect(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer dc.Close()
			c := dc.(*conn)
			if c.maxRequest != limitBytes {
				t.Fatalf("server announced a limit of %d, want %d", c.maxRequest, limitBytes)
			}
			exec := func(q string, args ...driver.NamedValue) error {
				_, err := c.ExecContext(ctx, q, args)
				return err
			}
			alive := func(when string) {
				t.Helper()
				rows, err := c.QueryContext(ctx, e.selectOne, nil)
				if err == nil {
					err = rows.Close()
				}
				if err != nil || !c.IsValid() {
					t.Fatalf("connection unusable %s: %v", when, err)
				}
			}
			if err := exec("CREATE TABLE lim (v CLOB)"); err != nil {
				t.Fatal(err)
			}
			arg := []driver.NamedValue{{Ordinal: 1, Value: big}}
			assertTooLarge(t, exec("INSERT INTO lim (v) VALUES (?)", arg...))
			alive("after the driver's refusal")

			c.maxRequest = 0 // a client that does not check: the server refuses
			assertTooLarge(t, exec("INSERT INTO lim (v) VALUES (?)", arg...))
			alive("after the server's refusal")

			// A result over the limit: a value of 2 MiB, sent inline by the engine.
			rows, err := c.QueryContext(ctx, "SELECT CAST(REPEAT('y', 2097152) AS VARCHAR(3000000)) FROM (VALUES (1)) AS t(x)", nil)
			if err == nil {
				dest := make([]driver.Value, 1)
				err = rows.Next(dest)
				rows.Close()
			}
			assertTooLarge(t, err)
			alive("after a result over the limit")

			// Nothing was stored by the refused requests; a request within the limit works.
			if err := exec("INSERT INTO lim (v) VALUES (?)", driver.NamedValue{Ordinal: 1, Value: big[:limitBytes/2]}); err != nil {
				t.Fatal(err)
			}
		})
	}
	// The server still serves new connections.
	db, err := sql.Open("jdbcbridge", testDSN(s, "jdbc:h2:mem:after_limits", "sa", ""))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Ping(); err != nil {
		t.Fatal(err)
	}
}

func assertTooLarge(t *testing.T, err error) {
	t.Helper()
	var be *Error
	if !errors.Is(err, ErrRequestTooLarge) || !errors.As(err, &be) || be.State != "54000" {
		t.Fatalf("got %v, want ErrRequestTooLarge (SQLSTATE 54000)", err)
	}
}
