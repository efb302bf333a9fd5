package main

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidemarkdb/tidemark/conformance/harness"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/internal/console"
)

// TestServeRefusesUnsafeListen: beyond loopback, serve needs a token and
// TLS or --insecure-http, and refuses before it opens the database (the
// SQLite file named is not created).
func TestServeRefusesUnsafeListen(t *testing.T) {
	db := filepath.Join(t.TempDir(), "never.db")
	for _, c := range []struct {
		args []string
		ok   bool
	}{
		{[]string{"--listen", "0.0.0.0:0"}, false},
		{[]string{"--listen", ":7464", "--token", "t"}, false},
		{[]string{"--listen", "192.0.2.1:7464", "--token", "t"}, false},
		{[]string{"--listen", "[::]:0", "--insecure-http"}, false},
	} {
		t.Setenv(envConsoleToken, "")
		out, err := run(t, consoleServeCmd(), append(c.args, "--dsn", "file:"+db)...)
		if !errors.Is(err, console.ErrInsecureListen) {
			t.Errorf("serve %v: %v, want ErrInsecureListen\n%s", c.args, err, out)
		}
	}
	if _, err := os.Stat(db); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused serve left %s: %v", db, err)
	}
	for _, c := range []struct {
		f    serveFlags
		want bool
	}{
		{serveFlags{listen: "127.0.0.1:7464"}, true},
		{serveFlags{listen: "localhost:0"}, true},
		{serveFlags{listen: "[::1]:0"}, true},
		{serveFlags{listen: "0.0.0.0:7464", token: "t", insecureHTTP: true}, false},
		{serveFlags{listen: "0.0.0.0:7464", token: "t", tlsCert: "c.pem", tlsKey: "k.pem"}, false},
	} {
		loopback, err := checkListen(c.f)
		if err != nil || loopback != c.want {
			t.Errorf("checkListen(%+v) = %v, %v; want %v, nil", c.f, loopback, err, c.want)
		}
	}
}

// TestDemoServe: `tidemark demo --serve` runs the demo, then serves the
// console on the demo's database: its consumer is listed RUNNING and
// /healthz answers ok.
func TestDemoServe(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	base, _ := startConsole(t, ctx, demoCmd(), "--serve", "--listen", "127.0.0.1:0")
	for path, want := range map[string]string{
		"/consumers": `data-role="state">RUNNING`,
		"/healthz":   `"ok":true`,
	} {
		res, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil || res.StatusCode != http.StatusOK || !strings.Contains(string(b), want) {
			t.Errorf("GET %s: %d, %v, want %s in\n%s", path, res.StatusCode, err, want, b)
		}
	}
}

// TestServeCreatesNothing: serve (and serve --read-only) on a database
// without a Tidemark schema fails with "no Tidemark schema at <dsn>"
// before it listens, and leaves no table behind; a missing SQLite file is
// not created.
func TestServeCreatesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("starts database servers")
	}
	modes := [][]string{{"--listen", "127.0.0.1:0"}, {"--listen", "127.0.0.1:0", "--read-only"}}
	path := filepath.Join(t.TempDir(), "typo.db")
	for _, m := range modes {
		out, err := run(t, consoleServeCmd(), append(m, "--dialect", "sqlite", "--dsn", "file:"+path)...)
		if !errors.Is(err, errNoDatabaseFile) {
			t.Errorf("serve %v on a missing file: %v (%s)", m, err, out)
		}
		if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("serve %v created %s (%v)", m, path, err)
		}
	}
	prov := harness.NewProvider()
	t.Cleanup(func() { prov.Close() })
	for _, eng := range []string{harness.EngineSQLite, harness.EnginePostgres} {
		t.Run(eng, func(t *testing.T) {
			db := openOrSkip(t, prov, eng)
			for _, m := range modes {
				out, err := run(t, consoleServeCmd(), append(m, "--dialect", eng, "--dsn", db.DSN, "--driver", db.DriverName)...)
				if !errors.Is(err, engine.ErrSchemaMissing) || !strings.Contains(err.Error(), "no Tidemark schema at ") {
					t.Errorf("serve %v: %v (%s), want no Tidemark schema", m, err, out)
				}
				expectNoTidemarkTables(t, eng, db, "serve "+strings.Join(m, " "))
			}
		})
	}
}
