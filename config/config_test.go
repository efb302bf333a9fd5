package config_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidemarkdb/tidemark/config"
	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/schema"
)

const full = `# a whole application
dialect: postgres
driver: pgx
dsn_env: APP_DSN
partitions: 8
prefix: ACME_
prefixes:
  saga: SAGA_
tables:
  consumers_table: MY_CONSUMERS
modes:
  publication: never
aggregates:
  - type: bank.Account
  - type: bank.BankAccount
    own_table: true
  - type: shop.Payment
    event_table: PAYMENTS_LOG
    snapshot_table: PAYMENTS_SNAP
query_tables:
  - projection: order-summary
    columns:
      - {name: customer, kind: text, unique: true}
      - {name: total, kind: decimal, precision: 12, scale: 2}
      - {name: placed_at, kind: INSTANT}
saga_tables: [ORDER_SAGA]
`

func TestLoadWholeConfiguration(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tidemark.yaml")
	if err := os.WriteFile(path, []byte(full), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	ec := c.EngineConfig()
	if ec.Partitions != 8 || ec.Modes[dialect.AreaPublication] != schema.Never {
		t.Errorf("engine config %+v", ec)
	}
	names, err := schema.Resolve(ec.Names)
	if err != nil {
		t.Fatal(err)
	}
	checks := map[string]string{
		"consumers":   names.Shared["consumers_table"],
		"events":      names.Shared["event_store_table"],
		"saga":        names.Shared["saga_instances_table"],
		"bank":        names.ByAggregate["bank.BankAccount"].Events,
		"payment":     names.ByAggregate["shop.Payment"].Snapshots,
		"publication": names.Shared["event_publication_metadata_table"],
	}
	want := map[string]string{"consumers": "ACME_MY_CONSUMERS", "events": "ACME_EVENT_STORE", "saga": "SAGA_SAGA_INSTANCES",
		"bank": "ACME_BANK_ACCOUNT_EVENTS", "payment": "PAYMENTS_SNAP", "publication": "EVENT_PUBLICATION_METADATA"}
	for k, w := range want {
		if checks[k] != w {
			t.Errorf("%s: got %s, want %s", k, checks[k], w)
		}
	}
	q := ec.QueryTables
	if len(q) != 1 || len(q[0].Fields) != 3 || q[0].Fields[1].Kind != dialect.KindDecimal || q[0].Fields[1].Precision != 12 || !q[0].Fields[0].Unique || q[0].Fields[2].Kind != dialect.KindInstant {
		t.Errorf("query tables %+v", q)
	}
	if name, _ := schema.ResolveQueryTable(q[0], ec.Names.Prefixes[dialect.AreaCQRS]); name != "ACME_order_summary" {
		t.Errorf("query table name %s", name)
	}
	if got := ec.Names.SagaTables; len(got) != 1 || got[0] != "ORDER_SAGA" {
		t.Errorf("saga tables %v", got)
	}
}

func TestDSNNeverPrints(t *testing.T) {
	c, err := config.Parse("t.yaml", []byte("dsn: postgres://app:hunter2@db/app\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{fmt.Sprint(c.DSN), fmt.Sprintf("%v %+v %#v %s", *c, *c, *c, c.DSN)} {
		if strings.Contains(s, "hunter2") {
			t.Errorf("DSN printed: %s", s)
		}
	}
	if v, err := c.DSNValue(); err != nil || v != "postgres://app:hunter2@db/app" {
		t.Errorf("DSNValue = %q, %v", v, err)
	}
	t.Setenv("TM_TEST_DSN", "file:x.db")
	c, err = config.Parse("t.yaml", []byte("dsn_env: TM_TEST_DSN\n"))
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := c.DSNValue(); v != "file:x.db" {
		t.Errorf("dsn from env: %q", v)
	}
	c.DSNEnv = "TM_TEST_UNSET_DSN"
	if _, err := c.DSNValue(); !errors.Is(err, config.ErrNoDSN) || !strings.Contains(err.Error(), "TM_TEST_UNSET_DSN") {
		t.Errorf("unset variable: %v", err)
	}
}

func TestRefusals(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		line       int
		key, in    string // key path, and a phrase of the reason
		is         error
	}{
		{"unknown top key", "dialect: postgres\nprefixs:\n  cqrs: X_\n", 2, "prefixs", "unknown key", nil},
		{"unknown nested key", "aggregates:\n  - type: a.B\n    own_tables: true\n", 3, "aggregates[0].own_tables", "unknown key", nil},
		{"unknown column key", "query_tables:\n  - projection: p\n    columns:\n      - name: a\n        kind: text\n        size: 3\n", 6, "query_tables[0].columns[0].size", "unknown key", nil},
		{"wrong type", "dialect: postgres\npartitions: many\n", 2, "partitions", `want an integer, got "many"`, nil},
		{"wrong nested type", "aggregates:\n  - type: a.B\n    own_table: yes please\n", 3, "aggregates[0].own_table", "want true or false", nil},
		{"aggregate without namespace", "aggregates:\n  - type: Account\n", 2, "aggregates[0].type", "no namespace: write namespace.Name", nil},
		{"syntax", "dialect: [postgres\n", 1, "", "", nil},
		{"bad dialect", "dialect: ../evil\n", 1, "dialect", "must match", nil},
		{"bad sha", "plugin:\n  sha256: abc\n", 2, "plugin.sha256", "64 hexadecimal", nil},
		{"dsn and dsn_env", "dsn: x\ndsn_env: Y\n", 2, "dsn_env", "not both", nil},
		{"bad env name", "dsn_env: A-B\n", 1, "dsn_env", "not an environment variable", nil},
		{"partitions", "partitions: 40000\n", 1, "partitions", "out of range", nil},
		{"bad prefix", "prefix: ACME-\n", 1, "prefix", "ACME-", schema.ErrInvalidIdentifier},
		{"bad area prefix", "prefixes:\n  messaging: 1X\n", 2, "prefixes.messaging", "1X", schema.ErrInvalidIdentifier},
		{"unknown area", "prefixes:\n  billing: B_\n", 2, "prefixes.billing", "unknown area", nil},
		{"publication prefix", "prefixes:\n  publication: P_\n", 2, "prefixes.publication", "takes no prefix", nil},
		{"unknown placeholder", "tables:\n  consumer_table: C\n", 2, "tables.consumer_table", "unknown table placeholder", nil},
		{"bad override", "tables:\n  consumers_table: \"MY CONSUMERS\"\n", 2, "tables.consumers_table", "MY CONSUMERS", schema.ErrInvalidIdentifier},
		{"override too long with prefix", "prefix: " + strings.Repeat("P", 40) + "\ntables:\n  consumers_table: " + strings.Repeat("C", 30) + "\n", 3, "tables.consumers_table", "limit is 63", schema.ErrInvalidIdentifier},
		{"bad mode", "modes:\n  cqrs: sometimes\n", 2, "modes.cqrs", "one of always, never", nil},
		{"mode area", "modes:\n  cqrx: never\n", 2, "modes.cqrx", "unknown area", nil},
		{"aggregate without type", "aggregates:\n  - own_table: true\n", 2, "aggregates[0].type", "needs type", nil},
		{"aggregate event table", "aggregates:\n  - type: a.B\n  - type: bank.Pay\n    event_table: PAY;DROP\n", 4, "aggregates[1].event_table", "PAY;DROP", schema.ErrInvalidIdentifier},
		{"aggregate snapshot table", "aggregates:\n  - type: bank.Pay\n    snapshot_table: 9SNAP\n", 3, "aggregates[0].snapshot_table", "9SNAP", schema.ErrInvalidIdentifier},
		{"aggregate derived name too long", "aggregates:\n  - type: a.B\n  - type: bank." + strings.Repeat("Long", 14) + "\n    own_table: true\n", 3, "aggregates[1].type", "limit is 63", schema.ErrInvalidIdentifier},
		{"aggregate twice", "aggregates:\n  - type: a.B\n  - type: a.B\n    own_table: true\n", 3, "aggregates[1].type", "already declared", nil},
		{"query table name", "query_tables:\n  - projection: p\n    table: \"x y\"\n", 3, "query_tables[0].table", "x y", schema.ErrInvalidIdentifier},
		{"query table twice", "query_tables:\n  - projection: a\n    table: T\n  - projection: b\n    table: t\n", 5, "query_tables[1].table", "already declared", nil},
		{"query without projection", "query_tables:\n  - columns: []\n", 2, "query_tables[0].projection", "without projection", nil},
		{"column name", "query_tables:\n  - projection: p\n    columns:\n      - {name: \"a-b\", kind: text}\n", 4, "query_tables[0].columns[0].name", "a-b", schema.ErrInvalidIdentifier},
		{"reserved column", "query_tables:\n  - projection: p\n    columns:\n      - {name: message_id, kind: text}\n", 4, "query_tables[0].columns[0].name", "own", nil},
		{"duplicate column", "query_tables:\n  - projection: p\n    columns:\n      - {name: a, kind: text}\n      - {name: A, kind: text}\n", 5, "query_tables[0].columns[1].name", "already declared", nil},
		{"kind", "query_tables:\n  - projection: p\n    columns:\n      - name: a\n        kind: money\n", 5, "query_tables[0].columns[0].kind", "one of text", nil},
		{"precision", "query_tables:\n  - projection: p\n    columns:\n      - name: a\n        kind: decimal\n        precision: 39\n", 6, "query_tables[0].columns[0].precision", "1..38", nil},
		{"scale", "query_tables:\n  - projection: p\n    columns:\n      - name: a\n        kind: decimal\n        precision: 5\n        scale: 6\n", 7, "query_tables[0].columns[0].scale", "0..precision", nil},
		{"precision on text", "query_tables:\n  - projection: p\n    columns:\n      - name: a\n        kind: text\n        precision: 5\n", 6, "query_tables[0].columns[0].precision", "decimal only", nil},
		{"saga table", "saga_tables:\n  - OK_SAGA\n  - \"bad saga\"\n", 3, "saga_tables[1]", "bad saga", schema.ErrInvalidIdentifier},
		{"collision", "aggregates:\n  - type: x.Y\n    event_table: CONSUMERS\n", 2, "aggregates[0].type", "both the", nil},
		{"two documents", "dialect: sqlite\n---\ndialect: postgres\n", 2, "", "second YAML document", nil},
		{"not a mapping", "- a\n- b\n", 1, "", "must be a mapping", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := config.Parse("app.yaml", []byte(tc.yaml))
			var ce *config.Error
			if !errors.As(err, &ce) {
				t.Fatalf("want *config.Error, got %v", err)
			}
			if !errors.Is(err, config.ErrInvalid) {
				t.Errorf("errors.Is(ErrInvalid) does not hold")
			}
			if ce.File != "app.yaml" || ce.Line != tc.line || ce.Key != tc.key || !strings.Contains(ce.Reason, tc.in) {
				t.Errorf("got file %s line %d key %q reason %q; want line %d key %q reason with %q", ce.File, ce.Line, ce.Key, ce.Reason, tc.line, tc.key, tc.in)
			}
			if !strings.HasPrefix(err.Error(), fmt.Sprintf("app.yaml:%d:", tc.line)) {
				t.Errorf("message does not start with file:line: %s", err)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("errors.Is(%v) does not hold for %v", tc.is, err)
			}
		})
	}
}

func TestEmptyFileIsDefaults(t *testing.T) {
	c, err := config.Parse("empty.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := schema.Resolve(c.EngineConfig().Names); err != nil {
		t.Fatal(err)
	}
}

func TestValidateInCode(t *testing.T) {
	c := &config.Config{SagaTables: []string{"bad name"}}
	var ce *config.Error
	if err := c.Validate(); !errors.As(err, &ce) || ce.Key != "saga_tables[0]" {
		t.Fatalf("got %v", err)
	}
}

func TestFind(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	t.Setenv(config.EnvFile, "")
	if got := config.Find(""); got != "" {
		t.Errorf("no file: %q", got)
	}
	os.WriteFile(config.DefaultFile, nil, 0o600)
	if got := config.Find(""); got != config.DefaultFile {
		t.Errorf("default file: %q", got)
	}
	t.Setenv(config.EnvFile, "other.yaml")
	if got := config.Find(""); got != "other.yaml" {
		t.Errorf("env: %q", got)
	}
	if got := config.Find("x.yaml"); got != "x.yaml" {
		t.Errorf("explicit: %q", got)
	}
}
