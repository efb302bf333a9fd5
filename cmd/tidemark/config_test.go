package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/tidemarkdb/tidemark/config"
)

// run executes a command as the CLI would, returning stdout+stderr.
func run(t *testing.T, cmd *cobra.Command, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	err := cmd.ExecuteContext(context.Background())
	return out.String(), err
}

func writeConfig(t *testing.T, dir, body string) string {
	t.Helper()
	path := filepath.Join(dir, "tidemark.yaml")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

const appConfig = `dialect: sqlite
dsn_env: TM_CLI_TEST_DSN
prefix: APP_
aggregates:
  - type: shop.Payment
    own_table: true
query_tables:
  - projection: order-summary
    columns:
      - {name: customer, kind: text, unique: true}
      - {name: total, kind: decimal, precision: 12, scale: 2}
saga_tables: [ORDER_SAGA]
`

func TestSchemaExportsTheConfiguration(t *testing.T) {
	path := writeConfig(t, t.TempDir(), appConfig)
	out, err := run(t, schemaCmd(), "--config", path)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"APP_PAYMENT_EVENTS", "APP_PAYMENT_SNAPSHOTS", "APP_order_summary", "customer", "idx_APP_order_summary_customer", "ORDER_SAGA", "APP_CONSUMERS", "EVENT_PUBLICATION_METADATA"} {
		if !strings.Contains(out, want) {
			t.Errorf("schema lacks %s", want)
		}
	}
	// A flag overrides the file: --prefix replaces APP_.
	out, err = run(t, schemaCmd(), "--config", path, "--prefix", "OTHER_")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "OTHER_PAYMENT_EVENTS") || strings.Contains(out, "APP_") {
		t.Errorf("--prefix did not override the file's prefix")
	}
}

func TestMigrateReadsConfigAndHidesDSN(t *testing.T) {
	dir := t.TempDir()
	path := writeConfig(t, dir, appConfig)
	secret := filepath.Join(dir, "secret-name.db")
	t.Setenv("TM_CLI_TEST_DSN", "file:"+secret)
	out, err := run(t, migrateCmd(), "--config", path)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(out, "1 query tables") {
		t.Errorf("migrate output: %s", out)
	}
	if _, err := os.Stat(secret); err != nil {
		t.Fatalf("database not created from dsn_env: %v", err)
	}
	var demo bytes.Buffer
	c, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := runDemo(context.Background(), &demo, c); err != nil {
		t.Fatalf("demo on the configured database: %v\n%s", err, demo.String())
	}
	for _, s := range []string{out, demo.String()} {
		if strings.Contains(s, "secret-name") {
			t.Errorf("DSN printed:\n%s", s)
		}
	}
	if !strings.Contains(demo.String(), "table APP_BANK_ACCOUNT_EVENTS") {
		t.Errorf("demo ignored the configuration's prefix:\n%s", demo.String())
	}
	// dsn_env naming an unset variable: the error names the variable.
	t.Setenv("TM_CLI_TEST_DSN", "")
	if _, err := run(t, migrateCmd(), "--config", path); !errors.Is(err, config.ErrNoDSN) || !strings.Contains(err.Error(), "TM_CLI_TEST_DSN") {
		t.Errorf("unset dsn_env: %v", err)
	}
}

func TestConfigValidate(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TM_CLI_TEST_DSN", "file:whatever.db")
	good := writeConfig(t, dir, appConfig)
	out, err := run(t, configCmd(), "validate", "--config", good)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(out, "valid: 1 aggregates, 1 query tables, 1 saga tables; DSN from $TM_CLI_TEST_DSN; schema planned with dialect sqlite") {
		t.Errorf("output: %s", out)
	}
	for _, tc := range []struct{ name, body, want string }{
		{"unknown key", appConfig + "colour: blue\n", "tidemark.yaml:13:1: colour: unknown key"},
		{"invalid name", strings.Replace(appConfig, "ORDER_SAGA", "ORDER-SAGA", 1), "tidemark.yaml:12:15: saga_tables[0]: invalid table name \"ORDER-SAGA\""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeConfig(t, t.TempDir(), tc.body)
			_, err := run(t, configCmd(), "validate", "--config", path)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("want %q, got %v", tc.want, err)
			}
		})
	}
}

// A name only the dialect refuses (longer than PostgreSQL's 63 characters
// once derived) is pinned to its key by validate.
func TestConfigValidateWithDialect(t *testing.T) {
	body := "dialect: postgres\nquery_tables:\n  - projection: p\n    table: " + strings.Repeat("Q", 60) + "\n    columns:\n      - {name: amount, kind: integer}\n"
	path := writeConfig(t, t.TempDir(), body)
	if _, err := run(t, configCmd(), "validate", "--config", path, "--offline"); err != nil {
		t.Fatalf("offline: %v", err)
	}
	_, err := run(t, configCmd(), "validate", "--config", path)
	var ce *config.Error
	if !errors.As(err, &ce) || ce.Line != 4 || ce.Key != "query_tables[0].table" || !strings.Contains(ce.Reason, "allows 63") {
		t.Fatalf("got %v", err)
	}
}

// conformance takes its dialect from the file: a dialect that does not
// exist is named in the error, before any server starts.
func TestConformanceReadsConfig(t *testing.T) {
	path := writeConfig(t, t.TempDir(), "dialect: nosuchdialect\n")
	_, err := run(t, conformanceCmd(), "--config", path)
	if err == nil || !strings.Contains(err.Error(), "nosuchdialect") {
		t.Fatalf("want an error naming the configured dialect, got %v", err)
	}
	// The flag overrides the file.
	_, err = run(t, conformanceCmd(), "--config", path, "--dialect", "otherdialect")
	if err == nil || !strings.Contains(err.Error(), "otherdialect") {
		t.Fatalf("want an error naming the flag's dialect, got %v", err)
	}
}
