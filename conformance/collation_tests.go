package conformance

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/internal/testtime"
)

// ignoreCase is, by driver, how an operator ends up with the core's tables
// comparing keys ignoring case: the database's default collation changed
// (fresh tables must still compare exactly: the DDL names the keys'
// collation), then a key column moved to it, as a DBA normalising the
// database's collations does.
var ignoreCase = map[string]struct{ database, table string }{
	"mysql": {
		database: "ALTER DATABASE CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci",
		table:    "ALTER TABLE ${consumer_checkpoints_table} MODIFY source_name VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci NOT NULL",
	},
}

// testKeyCollationRefused: where the dialect declares a KeyCollation check
// (an engine on which a column's collation can be changed after the core's
// DDL), a schema made under a case-insensitive database default opens, and
// once a key column compares ignoring case ("src" and "Src" one
// checkpoint), Open, read-write and read-only, refuses with
// *engine.KeyCollationError naming the table, the column and the collation.
func testKeyCollationRefused(t T, env *Env) {
	if env.Catalogue.KeyCollation.Query == "" {
		skipf(t, "%s declares no key-collation check: its keys' comparison is fixed by the DDL", env.Catalogue.Identity.Name)
	}
	conv, ok := ignoreCase[env.Driver]
	if !ok {
		t.Fatalf("%s declares a key-collation check, but the suite knows no case-insensitive collation for driver %s", env.Catalogue.Identity.Name, env.Driver)
	}
	ctx, cancel := testtime.Context(context.Background(), 2*time.Minute)
	defer cancel()
	e := openEngine(t, env, defaultConfig(env))
	if _, err := e.DB.ExecContext(ctx, conv.database); err != nil {
		t.Fatalf("%s: %v", conv.database, err)
	}
	fresh := defaultConfig(env)
	fresh.Names.Prefixes = fittingPrefixes(t, env, fresh, map[dialect.Area]string{
		dialect.AreaMessaging: "CI_", dialect.AreaEventSourcing: "CI_", dialect.AreaSaga: "CI_", dialect.AreaCQRS: "CI_"})
	fe, err := engine.Open(ctx, env.DB, env.Catalogue, fresh)
	if err != nil {
		t.Fatalf("a fresh schema made under a case-insensitive database default: %v", err)
	}
	fe.Close()
	if _, err := e.ExecText(ctx, e.DB, conv.table, nil, nil); err != nil {
		t.Fatalf("%s: %v", conv.table, err)
	}
	table := e.Names.Shared["consumer_checkpoints_table"]
	for _, readOnly := range []bool{false, true} {
		cfg := defaultConfig(env)
		cfg.ReadOnly = readOnly
		_, err := engine.Open(ctx, env.DB, env.Catalogue, cfg)
		kc := expectErr[*engine.KeyCollationError](t, err, "Open of a schema whose checkpoint keys ignore case")
		if !errors.Is(err, engine.ErrKeyCollation) || !strings.EqualFold(kc.Table, table) || kc.Column != "source_name" ||
			!strings.HasSuffix(kc.Collation, "_ci") || !strings.Contains(err.Error(), kc.Column) || !strings.Contains(err.Error(), kc.Collation) {
			t.Fatalf("read-only %v: %v, want the table %s, a key column and its _ci collation named", readOnly, err, table)
		}
	}
}
