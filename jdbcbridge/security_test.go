package jdbcbridge

import (
	"context"
	"database/sql"
	"errors"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"
)

func openErr(dsn string) error {
	db, err := sql.Open("jdbcbridge", dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return db.PingContext(ctx)
}

// TestURLAllowList checks that only allow-listed JDBC URLs open and H2 INIT= is refused.
func TestURLAllowList(t *testing.T) {
	s := startBridge(t)
	refused := []struct{ name, url, extra string }{
		{"other driver", "jdbc:derby:memory:x;create=true", ""},
		{"h2 implicit file", "jdbc:h2:~/evil", ""},
		{"h2 INIT", "jdbc:h2:mem:x;INIT=RUNSCRIPT FROM 'http://127.0.0.1/x.sql'", ""},
		{"h2 init lower case", "jdbc:h2:mem:x;init=CREATE ALIAS X AS 'int f(){return 1;}'", ""},
		{"h2 INIT with spaces", "jdbc:h2:mem:x; INIT =SELECT 1", ""},
		{"h2 INIT property", "jdbc:h2:mem:x", "prop.INIT=" + url.QueryEscape("RUNSCRIPT FROM 'x'")},
		{"prefix case trick", "JDBC:H2:MEM:x;INIT=SELECT 1", ""},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			dsn := s.DSN(tc.url, "sa", "")
			if tc.extra != "" {
				dsn += "&" + tc.extra
			}
			err := openErr(dsn)
			var be *Error
			if !errors.As(err, &be) || be.State != "08004" {
				t.Fatalf("got %v, want a refusal with SQLSTATE 08004", err)
			}
		})
	}
	for _, u := range []string{"jdbc:h2:mem:allowed1", "jdbc:hsqldb:mem:allowed2"} {
		if err := openErr(s.DSN(u, "sa", "")); err != nil {
			t.Errorf("%s: %v", u, err)
		}
	}
}

// TestCustomAllowList checks --allow-url-prefix replaces the defaults.
func TestCustomAllowList(t *testing.T) {
	startBridge(t)
	s, err := StartServer(context.Background(), StartOptions{AllowURLPrefixes: []string{"jdbc:hsqldb:mem:"}, Stderr: os.Stderr})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := openErr(s.DSN("jdbc:h2:mem:x", "sa", "")); err == nil {
		t.Error("H2 opened although only jdbc:hsqldb:mem: is allowed")
	}
	if err := openErr(s.DSN("jdbc:hsqldb:mem:custom", "SA", "")); err != nil {
		t.Error(err)
	}
}

// TestToken checks token enforcement and that binding a non-loopback address needs a token.
func TestToken(t *testing.T) {
	startBridge(t)
	ctx := context.Background()
	var stderr strings.Builder
	_, err := StartServer(ctx, StartOptions{Bind: "0.0.0.0", Stderr: &stderr})
	if err == nil {
		t.Fatal("server bound 0.0.0.0 without a token")
	}
	time.Sleep(100 * time.Millisecond)
	if !strings.Contains(stderr.String(), "without --token") {
		t.Logf("stderr: %q", stderr.String())
	}

	s, err := StartServer(ctx, StartOptions{Bind: "0.0.0.0", Token: "s3cret-token", Stderr: os.Stderr})
	if err != nil {
		t.Fatalf("start with token: %v", err)
	}
	defer s.Close()
	if !strings.HasPrefix(s.Addr, "127.0.0.1:") {
		t.Errorf("Addr = %q, want a loopback address to dial", s.Addr)
	}
	good := s.DSN("jdbc:h2:mem:tok", "sa", "")
	if err := openErr(good); err != nil {
		t.Fatalf("right token: %v", err)
	}
	for name, tok := range map[string]string{"wrong": "nope", "missing": ""} {
		cfg, _ := ParseDSN(good)
		cfg.Token = tok
		err := openErr(cfg.FormatDSN())
		var be *Error
		if !errors.As(err, &be) || be.State != "28000" {
			t.Errorf("%s token: got %v, want SQLSTATE 28000", name, err)
		}
	}
}

// TestDSN checks DSN parsing and formatting.
func TestDSN(t *testing.T) {
	dsn := "jdbcbridge://127.0.0.1:4242?url=" + url.QueryEscape("jdbc:hsqldb:mem:x;hsqldb.tx=mvcc") +
		"&user=SA&password=p%26w&token=t&fetchSize=10&cancelGrace=500ms&prop.foo=bar"
	cfg, err := ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Addr != "127.0.0.1:4242" || cfg.URL != "jdbc:hsqldb:mem:x;hsqldb.tx=mvcc" || cfg.User != "SA" ||
		cfg.Password != "p&w" || cfg.Token != "t" || cfg.FetchSize != 10 || cfg.CancelGrace != 500*time.Millisecond ||
		cfg.Properties["foo"] != "bar" {
		t.Fatalf("parsed %+v", cfg)
	}
	again, err := ParseDSN(cfg.FormatDSN())
	if err != nil || again.URL != cfg.URL || again.Password != cfg.Password || again.FetchSize != 10 {
		t.Fatalf("round trip: %+v, %v", again, err)
	}
	for _, bad := range []string{"postgres://x", "jdbcbridge://h:1", "jdbcbridge://h:1?url=jdbc:h2:mem:x&bogus=1", "jdbcbridge://?url=x"} {
		if _, err := ParseDSN(bad); err == nil {
			t.Errorf("ParseDSN(%q) accepted", bad)
		}
	}
}
