package main

import (
	"bytes"
	"context"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/tidemarkdb/tidemark/config"
	"github.com/tidemarkdb/tidemark/core/dialect/plugin"
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
		plugin.Serve(d)
		return
	}
	code := m.Run()
	plugin.CleanupClients()
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
		// The projection applies every event once, the poison ones too
		// (its listeners never fail): 120.50 - 20 ... per the demo's script.
		"projection demo-account-summary: 13 events applied",
		`projection Get(acc-1): owner "Ada", balance 110.00, 3 movements`,
		"first 3):  acc-1 110.00  acc-2 50.00",
		"saga    demo.TransferSaga: tr-1 waits for payment (1 deadline",
		"tr-1 cancelled unpaid (75.00), completed",
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
	checkConsumerDemo(t, s)
}

// checkConsumerDemo asserts the consumer part of the demo: the poison
// withdrawal dead-lettered with the message behind it held, other accounts
// flowing, the operator's retry applying both, and the restart applying
// only the events appended after the checkpoint.
func checkConsumerDemo(t *testing.T, s string) {
	t.Helper()
	for _, re := range []string{
		`(?m)^consumer undelivered bank\.Account/acc-3\s+position 9\s+FAILED\s+failures 1, next retry \+1ms$`,
		`(?m)^dead\s+bank\.Account/acc-3\s+position 9\s+partition \d+\s+DEAD_LETTER_KEY\s+failures 2\s+.*acc-3 would go to -40\.00`,
		`(?m)^dead\s+bank\.Account/acc-3\s+position 10\s+partition \d+\s+DEAD_LETTER_KEY\s+failures 0`,
		`(?m)^consumer poll 3 \(other accounts keep flowing\):\s+1 applied, 1 handler calls \(positions 11\)$`,
		`(?m)^retry\s+operator .* 1 released with a fresh budget, 1 back to WAITING$`,
		`(?m)^consumer poll 4:\s+2 applied, 2 handler calls \(positions 9 10\)$`,
		`(?m)^retry\s+0 undelivered messages left$`,
		`(?m)^restart\s+new runner, poll: 2 applied, 2 handler calls \(positions 12 13\); 0 of the 11 earlier events applied again$`,
	} {
		if !regexp.MustCompile(re).MatchString(s) {
			t.Errorf("demo output does not match %s:\n%s", re, s)
		}
	}
	// The last read model: acc-3 -40 + 15 after the retry, acc-1 +10 and
	// acc-2 -30 from the restart, BA-17 untouched.
	last := s[strings.LastIndex(s, "read model"):]
	for _, want := range []string{"BA-17     -20.00", "acc-1     110.00", "acc-2      50.00", "acc-3     -25.00"} {
		if !strings.Contains(last, want) {
			t.Errorf("final read model lacks %q:\n%s", want, last)
		}
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
