package main

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

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
