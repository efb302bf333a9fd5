package jdbcbridge

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"
)

// A bridge that accepts but does not answer within dialTimeout (a loaded
// machine, a stuck JVM) gets an error naming the setting, not "bad
// connection" or "connection lost": the caller knows what to raise.
func TestHandshakePastDialTimeoutNamesTheSetting(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close() // held open, never answered
		}
	}()
	c := NewConnector(Config{Addr: ln.Addr().String(), URL: "jdbc:h2:mem:x", DialTimeout: 200 * time.Millisecond})
	_, err = c.Connect(context.Background())
	if err == nil || !strings.Contains(err.Error(), "dialTimeout") {
		t.Fatalf("want an error naming dialTimeout, got %v", err)
	}
}
