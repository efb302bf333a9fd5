package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/tidemarkdb/tidemark/conformance/harness"
	"github.com/tidemarkdb/tidemark/core/consumer"
	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/dialect/plugin"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/schema"
)

// operatorCommands is every `tidemark consumers` command with the
// arguments it needs, readers and writers.
var operatorCommands = [][]string{
	{"list"}, {"status", cliRef}, {"dead-letters", cliRef}, {"dead-letters", "list", cliRef},
	{"pause", cliRef}, {"resume", cliRef}, {"resume", cliRef, "--past-poison"},
	{"skip", cliRef, "--source", engine.EventStoreTopic, "--partition", "0", "--position", "1", "--every-key", "--ahead"},
	{"unsubscribe", cliRef, "--source", engine.EventStoreTopic},
	{"dead-letters", "retry", cliRef, "--all"}, {"dead-letters", "delete", cliRef, "--all"},
}

// TestOperatorCommandsCreateNothing: every consumers command on a database
// without a Tidemark schema fails with "no Tidemark schema at <dsn>"
// (errors.Is engine.ErrSchemaMissing, the password redacted) and leaves no
// table behind; on SQLite a missing file is not created.
func TestOperatorCommandsCreateNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("starts database servers")
	}
	t.Run("sqlite_missing_file", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "typo.db")
		for _, c := range operatorCommands {
			out, err := run(t, consumersCmd(), append(c, "--dialect", "sqlite", "--dsn", "file:"+path)...)
			if !errors.Is(err, errNoDatabaseFile) || !strings.Contains(err.Error(), "no Tidemark schema at file:"+path) {
				t.Errorf("%s: %v (%s), want no Tidemark schema at file:%s", strings.Join(c, " "), err, out, path)
			}
			if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("%s created %s (%v)", strings.Join(c, " "), path, err)
			}
		}
	})
	prov := harness.NewProvider()
	t.Cleanup(func() { prov.Close() })
	for _, eng := range []string{harness.EngineSQLite, harness.EnginePostgres, harness.EngineMariaDB} {
		t.Run(eng, func(t *testing.T) {
			db := openOrSkip(t, prov, eng)
			for _, c := range operatorCommands {
				out, err := run(t, consumersCmd(), append(c, "--dialect", eng, "--dsn", db.DSN, "--driver", db.DriverName)...)
				if !errors.Is(err, engine.ErrSchemaMissing) || !strings.Contains(err.Error(), "no Tidemark schema at ") {
					t.Errorf("%s: %v (%s), want no Tidemark schema", strings.Join(c, " "), err, out)
				}
				if pw := dsnPassword(db.DSN); err != nil && pw != "" && strings.Contains(err.Error(), pw) {
					t.Errorf("%s: the error shows the password: %v", strings.Join(c, " "), err)
				}
				expectNoTidemarkTables(t, eng, db, strings.Join(c, " "))
			}
		})
	}
}

// expectNoTidemarkTables fails for every table of the default schema that
// exists in db.
func expectNoTidemarkTables(t *testing.T, eng string, db *harness.Database, what string) {
	t.Helper()
	ctx := context.Background()
	l, err := load(ctx, &pluginFlags{dialect: eng})
	if err != nil {
		t.Fatal(err)
	}
	names, err := schema.Resolve(schema.Config{})
	if err != nil {
		t.Fatal(err)
	}
	h, err := sql.Open(db.DriverName, db.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	for _, o := range schema.Objects(&l.Catalogue, names) {
		if o.Kind != dialect.ObjectTable {
			continue
		}
		if ok, err := schema.TableExists(ctx, h, &l.Catalogue, o.Name); err != nil {
			t.Fatal(err)
		} else if ok {
			t.Fatalf("%s created table %s", what, o.Name)
		}
	}
}

// dsnPassword is the password of a URL or go-sql-driver/mysql DSN, or "".
func dsnPassword(dsn string) string {
	if u, err := url.Parse(dsn); err == nil && u.User != nil {
		pw, _ := u.User.Password()
		return pw
	}
	if m := regexp.MustCompile(`^[^:@/]*:([^@]*)@`).FindStringSubmatch(dsn); m != nil {
		return m[1]
	}
	return ""
}

func TestRedactDSN(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://u:s3cret@127.0.0.1:5432/db?sslmode=disable": "postgres://u:xxxxx@127.0.0.1:5432/db?sslmode=disable",
		"host=h user=u password=s3cret dbname=d":                "host=h user=u password=xxxxx dbname=d",
		"u:s3cret@tcp(127.0.0.1:3306)/db?parseTime=true":        "u:xxxxx@tcp(127.0.0.1:3306)/db?parseTime=true",
		"jdbc:h2:mem:x;USER=sa;PASSWORD=s3cret":                 "jdbc:h2:mem:x;USER=sa;PASSWORD=xxxxx",
		"file:typo.db":                                          "file:typo.db",
	} {
		if got := redactDSN(in); got != want {
			t.Errorf("redactDSN(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestChangeOutputIsNoTemplate: an operation on a source prints the
// operation's name in --json (not a format template) and the source as
// typed in the text, "%" included.
func TestChangeOutputIsNoTemplate(t *testing.T) {
	do := func(context.Context, *consumer.Operator, consumer.Ref) (consumer.Changes, error) {
		return consumer.Changes{Checkpoints: 2}, nil
	}
	var text, js bytes.Buffer
	if err := changeRunOn("unsubscribe", "src%s%d", do)(context.Background(), nil, &text, false, []string{"projection/x"}); err != nil {
		t.Fatal(err)
	}
	if want := "unsubscribe projection/x from src%s%d: 2 checkpoints deleted\n"; text.String() != want {
		t.Errorf("text: %q, want %q", text.String(), want)
	}
	if err := changeRunOn("unsubscribe", "src%s", do)(context.Background(), nil, &js, true, []string{"projection/x"}); err != nil {
		t.Fatal(err)
	}
	var got struct{ Operation, Source string }
	if err := json.Unmarshal(js.Bytes(), &got); err != nil || got.Operation != "unsubscribe" || got.Source != "src%s" {
		t.Errorf("--json: %s (%v), want operation unsubscribe, source src%%s", js.String(), err)
	}
}

// TestUnknownSubcommandFails: an unknown subcommand of a command group
// prints the group's help and fails; the bare group prints help and
// succeeds.
func TestUnknownSubcommandFails(t *testing.T) {
	for _, mk := range []func() *cobra.Command{consumersCmd, configCmd} {
		out, err := run(t, mk(), "frobnicate")
		if err == nil || !strings.Contains(err.Error(), `unknown command "frobnicate"`) || !strings.Contains(out, "Available Commands") {
			t.Errorf("%s frobnicate: %v\n%s", mk().Name(), err, out)
		}
		if out, err := run(t, mk()); err != nil || !strings.Contains(out, "Available Commands") {
			t.Errorf("bare %s: %v\n%s", mk().Name(), err, out)
		}
	}
}

// TestUnknownDialectListsKnown: a dialect found nowhere is an error that
// lists the built-in dialects.
func TestUnknownDialectListsKnown(t *testing.T) {
	out, err := run(t, consumersCmd(), "list", "--dialect", "oracle", "--dsn", "file:"+filepath.Join(t.TempDir(), "x.db"))
	var nf *plugin.NotFoundError
	if !errors.As(err, &nf) || !strings.Contains(err.Error(), "known dialects: ") {
		t.Fatalf("unknown dialect: %v (%s), want a NotFoundError listing the known dialects", err, out)
	}
	for _, name := range []string{"sqlite", "postgres", "mariadb", "hsqldb"} {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("unknown dialect: %v does not list %s", err, name)
		}
	}
}
