package conformance

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/schema"
)

func queryTableTests() []Test {
	return []Test{
		{"querytable/declared_shape_accepted", testQueryTableAccepted},
		{"querytable/missing_column_refused", testQueryTableMissingColumn},
		{"querytable/unique_mismatch_refused", testQueryTableUniqueMismatch},
		{"querytable/kind_mismatch_refused", testQueryTableKindMismatch},
		{"querytable/narrower_decimal_refused", testQueryTableNarrowerDecimal},
		{"querytable/missing_table_with_creation_off", testQueryTableMissingWithCreationOff},
	}
}

// tryOpen opens an engine and returns the error instead of failing.
func tryOpen(t T, env *Env, cfg engine.Config) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	e, err := engine.Open(ctx, env.DB, env.Catalogue, cfg)
	if err == nil {
		e.Close()
	}
	return err
}

// withQueryTable is the default configuration with q as its only query table.
func withQueryTable(q schema.QueryTable) engine.Config {
	cfg := defaultConfig()
	cfg.QueryTables = []schema.QueryTable{q}
	return cfg
}

// expectQueryTableError checks a refusal names the table and the column.
func expectQueryTableError(t T, err error, table, column, what string) *schema.QueryTableError {
	t.Helper()
	qe := expectErr[*schema.QueryTableError](t, err, what)
	if !errors.Is(err, schema.ErrQueryTableMismatch) {
		t.Errorf("%s: errors.Is(err, ErrQueryTableMismatch) is false for %v", what, err)
	}
	if !strings.EqualFold(qe.Table, table) || !strings.Contains(strings.ToLower(err.Error()), strings.ToLower(table)) {
		t.Errorf("%s: error does not name table %s: %v", what, table, err)
	}
	if column != "" && (!strings.EqualFold(qe.Column, column) || !strings.Contains(err.Error(), column)) {
		t.Errorf("%s: error does not name column %s: %v", what, column, err)
	}
	if qe.Found == "" || qe.Declared == "" || qe.Remedy == "" {
		t.Errorf("%s: error lacks a shape or the remedy: %#v", what, qe)
	}
	t.Logf("%s: %v", what, err)
	return qe
}

func queryTableName(t T, q schema.QueryTable) string {
	t.Helper()
	n, err := schema.ResolveQueryTable(q, "")
	if err != nil {
		t.Fatalf("%v", err)
	}
	return n
}

func testQueryTableAccepted(t T, env *Env) {
	openEngine(t, env, defaultConfig())
	openEngine(t, env, defaultConfig())
}

func testQueryTableMissingColumn(t T, env *Env) {
	openEngine(t, env, defaultConfig())
	q := testQueryTable
	q.Fields = append(append([]schema.QueryField(nil), q.Fields...), schema.QueryField{Column: "closed_on", Kind: dialect.KindDate})
	err := tryOpen(t, env, withQueryTable(q))
	qe := expectQueryTableError(t, err, queryTableName(t, q), "closed_on", "an extra declared field")
	if !strings.Contains(qe.Remedy, "drop") {
		t.Errorf("remedy does not say to drop the table: %s", qe.Remedy)
	}
}

func testQueryTableUniqueMismatch(t T, env *Env) {
	for _, created := range []bool{false, true} {
		q := schema.QueryTable{Projection: "unique-check-" + map[bool]string{false: "a", true: "b"}[created], Fields: []schema.QueryField{
			{Column: "code", Kind: dialect.KindText, Unique: created},
		}}
		openEngine(t, env, withQueryTable(q))
		q.Fields = []schema.QueryField{{Column: "code", Kind: dialect.KindText, Unique: !created}}
		err := tryOpen(t, env, withQueryTable(q))
		expectQueryTableError(t, err, queryTableName(t, q), "code", "unique changed from "+map[bool]string{false: "false", true: "true"}[created])
	}
}

func testQueryTableKindMismatch(t T, env *Env) {
	for _, kind := range []dialect.QueryFieldKind{dialect.KindInteger, dialect.KindBoolean} {
		q := schema.QueryTable{Projection: "kind-check-" + strings.ToLower(string(kind)), Fields: []schema.QueryField{
			{Column: "val", Kind: dialect.KindText},
		}}
		openEngine(t, env, withQueryTable(q))
		q.Fields = []schema.QueryField{{Column: "val", Kind: kind}}
		err := tryOpen(t, env, withQueryTable(q))
		qe := expectQueryTableError(t, err, queryTableName(t, q), "val", "TEXT declared as "+string(kind))
		if !strings.Contains(qe.Declared, string(kind)) || !strings.Contains(err.Error(), qe.Found) {
			t.Errorf("error does not name both shapes (found %q, declared %q): %v", qe.Found, qe.Declared, err)
		}
	}
}

func testQueryTableNarrowerDecimal(t T, env *Env) {
	dec := func(p, s int) schema.QueryTable {
		return schema.QueryTable{Projection: "decimal-check", Fields: []schema.QueryField{
			{Column: "amount", Kind: dialect.KindDecimal, Precision: p, Scale: s},
		}}
	}
	openEngine(t, env, withQueryTable(dec(19, 2)))
	err := tryOpen(t, env, withQueryTable(dec(24, 4)))
	expectQueryTableError(t, err, queryTableName(t, dec(24, 4)), "amount", "DECIMAL(19,2) declared DECIMAL(24,4)")
	// Declared narrower than stored: every declared value fits.
	for _, d := range [][2]int{{19, 2}, {10, 2}, {18, 1}, {17, 0}} {
		if err := tryOpen(t, env, withQueryTable(dec(d[0], d[1]))); err != nil {
			t.Errorf("DECIMAL(19,2) declared DECIMAL(%d,%d): %v", d[0], d[1], err)
		}
	}
	// More scale than stored is refused even with fewer integer digits.
	err = tryOpen(t, env, withQueryTable(dec(19, 3)))
	expectQueryTableError(t, err, queryTableName(t, dec(19, 3)), "amount", "DECIMAL(19,2) declared DECIMAL(19,3)")
}

func testQueryTableMissingWithCreationOff(t T, env *Env) {
	// Every other table exists; only the query table is missing.
	cfg := defaultConfig()
	cfg.QueryTables = nil
	openEngine(t, env, cfg)
	cfg = defaultConfig()
	cfg.Modes = map[dialect.Area]schema.Mode{dialect.AreaCQRS: schema.Never}
	err := tryOpen(t, env, cfg)
	expectQueryTableError(t, err, queryTableName(t, testQueryTable), "", "query table missing with creation off")
	if !errors.Is(err, schema.ErrMissingTable) {
		t.Errorf("errors.Is(err, ErrMissingTable) is false: %v", err)
	}
	if !strings.Contains(err.Error(), dialect.ScriptQueryTable) {
		t.Errorf("error does not name %s: %v", dialect.ScriptQueryTable, err)
	}
	// A fresh database with the whole cqrs area off is refused too.
	fresh := newEnvLike(t, env)
	if fresh == nil {
		return
	}
	err = tryOpen(t, fresh, cfg)
	if err == nil {
		t.Fatalf("fresh database with cqrs creation off: opened")
	}
	if !errors.Is(err, schema.ErrMissingTable) {
		t.Errorf("fresh database with cqrs creation off: want a missing table, got %v", err)
	}
}

// newEnvLike gives another fresh database of the same target.
func newEnvLike(t T, env *Env) *Env {
	t.Helper()
	if env.Target.Fresh == nil {
		return nil
	}
	return newEnv(t, env.Target, env.Catalogue)
}
