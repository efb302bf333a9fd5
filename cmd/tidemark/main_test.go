package main

import (
	"bytes"
	"context"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/tidemarkdb/tidemark/config"
	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/plugins/builtin"
)

// TestMain lets this test binary serve built-in dialects when it is
// re-executed as a plugin, exactly as the tidemark binary does.
func TestMain(m *testing.M) {
	if len(os.Args) == 3 && os.Args[1] == serveCommand {
		d, ok := builtin.Lookup(os.Args[2])
		if !ok {
			os.Exit(2)
		}
		dialect.Serve(d)
		return
	}
	code := m.Run()
	dialect.CleanupClients()
	os.Exit(code)
}

func TestDemoOnEmbeddedSQLite(t *testing.T) {
	var out bytes.Buffer
	if err := runDemo(context.Background(), &out, &config.Config{}); err != nil {
		t.Fatalf("demo: %v\n%s", err, out.String())
	}
	s := out.String()
	for _, want := range []string{
		"loaded out of process", "built into tidemark, served by re-executing it",
		"table EVENT_STORE", "table BANK_ACCOUNT_EVENTS", "high-water mark 0 → 4",
		"4 events in global order, merged from 2 event tables",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("demo output lacks %q:\n%s", want, s)
		}
	}
	// The read-back lists positions 1..4 in order.
	got := regexp.MustCompile(`(?m)^\s+(\d)\s+bank\.`).FindAllStringSubmatch(s, -1)
	if len(got) != 4 {
		t.Fatalf("read-back lines: %v", got)
	}
	for i, g := range got {
		if g[1] != string(rune('1'+i)) {
			t.Errorf("line %d shows position %s", i, g[1])
		}
	}
	if !regexp.MustCompile(`pid [1-9]\d*`).MatchString(s) {
		t.Errorf("no plugin pid shown: %s", s)
	}
}

func TestSchemaExportRefusesBadPrefix(t *testing.T) {
	cmd := schemaCmd()
	cmd.SetArgs([]string{"--dialect", "sqlite", "--prefix", "ACME-"})
	cmd.SetOut(new(bytes.Buffer))
	cmd.SetErr(new(bytes.Buffer))
	err := cmd.ExecuteContext(context.Background())
	if err == nil || !strings.Contains(err.Error(), "ACME-") {
		t.Fatalf("want an error naming the invalid prefix, got %v", err)
	}
}

func TestPinnedChecksumMismatchRefused(t *testing.T) {
	cmd := schemaCmd()
	cmd.SetArgs([]string{"--dialect", "sqlite", "--plugin", os.Args[0], "--sha256", strings.Repeat("ab", 32)})
	cmd.SetOut(new(bytes.Buffer))
	cmd.SetErr(new(bytes.Buffer))
	err := cmd.ExecuteContext(context.Background())
	if err == nil || !strings.Contains(err.Error(), strings.Repeat("ab", 32)) {
		t.Fatalf("want a checksum mismatch naming the pinned digest, got %v", err)
	}
}
