package conformance

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/schema"
	"github.com/tidemarkdb/tidemark/core/sqlerr"
	"github.com/tidemarkdb/tidemark/internal/testtime"
)

func queryTableTests() []Test {
	return []Test{
		{"querytable/declared_shape_accepted", testQueryTableAccepted},
		{"querytable/missing_column_refused", testQueryTableMissingColumn},
		{"querytable/unique_mismatch_refused", testQueryTableUniqueMismatch},
		{"querytable/kind_mismatch_refused", testQueryTableKindMismatch},
		{"querytable/narrower_decimal_refused", testQueryTableNarrowerDecimal},
		{"querytable/missing_table_with_creation_off", testQueryTableMissingWithCreationOff},
		{"querytable/widest_decimal_exact", testWidestDecimalExact},
		{"querytable/unique_admits_many_nulls", testUniqueAdmitsManyNulls},
		{"querytable/two_projections_one_table_refused", testTwoProjectionsOneTableRefused},
	}
}

// tryOpen opens an engine and returns the error instead of failing.
func tryOpen(t T, env *Env, cfg engine.Config) error {
	t.Helper()
	ctx, cancel := testtime.Context(context.Background(), 2*time.Minute)
	defer cancel()
	e, err := engine.Open(ctx, env.DB, env.Catalogue, cfg)
	if err == nil {
		e.Close()
	}
	return err
}

// withQueryTable is the default configuration with q as its only query table.
func withQueryTable(env *Env, q schema.QueryTable) engine.Config {
	cfg := defaultConfig(env)
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
	openEngine(t, env, defaultConfig(env))
	openEngine(t, env, defaultConfig(env))
}

func testQueryTableMissingColumn(t T, env *Env) {
	openEngine(t, env, defaultConfig(env))
	q := env.Features.fixtureQueryTable()
	q.Fields = append(q.Fields, schema.QueryField{Column: "closed_on", Kind: dialect.KindDate})
	err := tryOpen(t, env, withQueryTable(env, q))
	qe := expectQueryTableError(t, err, queryTableName(t, q), "closed_on", "an extra declared field")
	addColumn := "ALTER TABLE " + queryTableName(t, q) + " ADD closed_on "
	if !strings.Contains(strings.ToUpper(qe.Remedy), strings.ToUpper(addColumn)) || !strings.Contains(qe.Remedy, "accept") || !strings.Contains(qe.Remedy, "rebuild") {
		t.Errorf("remedy does not name %s… and accept or rebuild: %s", addColumn, qe.Remedy)
	}
	if strings.Contains(qe.Remedy, "drop") {
		t.Errorf("remedy says to drop the table for a missing column: %s", qe.Remedy)
	}
	checkAddColumnRemedy(t, env, q, qe.Remedy)
}

// checkAddColumnRemedy runs the statements a missing column's remedy names
// (between its parentheses, ; apart): the engine then opens with q.
func checkAddColumnRemedy(t T, env *Env, q schema.QueryTable, remedy string) {
	t.Helper()
	open, end := strings.Index(remedy, "("), strings.Index(remedy, "), then")
	if open < 0 || end < open {
		t.Fatalf("remedy names no statements: %s", remedy)
	}
	for _, st := range strings.Split(remedy[open+1:end], "; ") {
		if _, err := env.DB.ExecContext(context.Background(), st); err != nil {
			t.Fatalf("the remedy's %q: %v", st, err)
		}
	}
	if err := tryOpen(t, env, withQueryTable(env, q)); err != nil {
		t.Errorf("after the remedy's statements the engine does not open: %v", err)
	}
}

func testQueryTableUniqueMismatch(t T, env *Env) {
	for _, created := range []bool{false, true} {
		q := schema.QueryTable{Projection: "unique-check-" + map[bool]string{false: "a", true: "b"}[created], Fields: []schema.QueryField{
			{Column: "code", Kind: dialect.KindText, Unique: created},
		}}
		openEngine(t, env, withQueryTable(env, q))
		q.Fields = []schema.QueryField{{Column: "code", Kind: dialect.KindText, Unique: !created}}
		err := tryOpen(t, env, withQueryTable(env, q))
		expectQueryTableError(t, err, queryTableName(t, q), "code", "unique changed from "+map[bool]string{false: "false", true: "true"}[created])
	}
}

func testQueryTableKindMismatch(t T, env *Env) {
	for _, kind := range []dialect.QueryFieldKind{dialect.KindInteger, dialect.KindBoolean} {
		q := schema.QueryTable{Projection: "kind-check-" + strings.ToLower(string(kind)), Fields: []schema.QueryField{
			{Column: "val", Kind: dialect.KindText},
		}}
		openEngine(t, env, withQueryTable(env, q))
		q.Fields = []schema.QueryField{{Column: "val", Kind: kind}}
		err := tryOpen(t, env, withQueryTable(env, q))
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
	// DECIMAL(19,2) stored, DECIMAL(24,4) declared where the engine holds
	// 24 digits; on a narrower engine the same shapes 5 digits below its
	// limit (DECIMAL(13,2) and DECIMAL(18,4) at 18).
	hi := min(24, env.Features.MaxDecimalPrecision)
	lo := hi - 5
	openEngine(t, env, withQueryTable(env, dec(lo, 2)))
	err := tryOpen(t, env, withQueryTable(env, dec(hi, 4)))
	expectQueryTableError(t, err, queryTableName(t, dec(hi, 4)), "amount", fmt.Sprintf("DECIMAL(%d,2) declared DECIMAL(%d,4)", lo, hi))
	// Declared narrower than stored: every declared value fits.
	for _, d := range [][2]int{{lo, 2}, {max(lo-9, 3), 2}, {lo - 1, 1}, {lo - 2, 0}} {
		if err := tryOpen(t, env, withQueryTable(env, dec(d[0], d[1]))); err != nil {
			t.Errorf("DECIMAL(%d,2) declared DECIMAL(%d,%d): %v", lo, d[0], d[1], err)
		}
	}
	// More scale than stored is refused even with fewer integer digits.
	err = tryOpen(t, env, withQueryTable(env, dec(lo, 3)))
	expectQueryTableError(t, err, queryTableName(t, dec(lo, 3)), "amount", fmt.Sprintf("DECIMAL(%d,2) declared DECIMAL(%d,3)", lo, lo))
}

// testWidestDecimalExact checks the declared MaxDecimalPrecision: the
// fixture query table's decimal (the widest the engine declares, at most
// 38) keeps a value with every digit, read back as text; and a field one
// digit wider is refused before any SQL.
func testWidestDecimalExact(t T, env *Env) {
	e := openEngine(t, env, defaultConfig(env))
	q := env.Features.fixtureQueryTable()
	var p, sc int
	for _, f := range q.Fields {
		if f.Kind == dialect.KindDecimal {
			p, sc = f.Precision, f.Scale
		}
	}
	// 1234567890… with p-sc integer digits and sc fraction digits.
	digits := strings.Repeat("1234567890", 4)
	want := digits[:p-sc] + "." + digits[p-sc:p]
	table := queryTableName(t, q)
	ctx := context.Background()
	ins := dialect.Compile("INSERT INTO "+table+" (read_model_id, message_id, balance) VALUES (#{id}, #{msg}, "+castDecimal(e, want, p, sc)+")", e.Cat.Identity.Placeholder)
	args, err := ins.Args(map[string]any{"id": "rm-1", "msg": "00000000-0000-0000-0000-000000000001"})
	if err != nil {
		t.Fatalf("%v", err)
	}
	if _, err := e.DB.ExecContext(ctx, ins.SQL, args...); err != nil {
		t.Fatalf("inserting DECIMAL(%d,%d) %s: %v", p, sc, want, err)
	}
	var got any
	if err := e.DB.QueryRowContext(ctx, "SELECT balance FROM "+table+" WHERE read_model_id = 'rm-1'").Scan(&got); err != nil {
		t.Fatalf("reading it back: %v", err)
	}
	text := schema.AsString(got)
	if f, ok := got.(float64); ok {
		text = strconv.FormatFloat(f, 'f', -1, 64)
	}
	if normDecimal(text) != normDecimal(want) {
		t.Errorf("DECIMAL(%d,%d) %s read back as %v (%T): the engine does not hold the %d digits its catalogue declares (EngineFacts.MaxDecimalPrecision %d)",
			p, sc, want, got, got, p, env.Catalogue.Facts.MaxDecimalPrecision)
	}
	if p < 38 {
		wider := schema.QueryTable{Projection: "too-wide", Fields: []schema.QueryField{{Column: "amount", Kind: dialect.KindDecimal, Precision: p + 1, Scale: 0}}}
		if err := tryOpen(t, env, withQueryTable(env, wider)); err == nil {
			t.Errorf("DECIMAL(%d,0) on an engine declaring %d digits: accepted", p+1, p)
		}
	}
	t.Logf("DECIMAL(%d,%d) %s round-trips", p, sc, want)
}

// castDecimal is the literal of a decimal value as SQL text (a literal,
// not a bind: drivers convert bound strings and floats each their own way).
func castDecimal(e *engine.Engine, v string, p, s int) string {
	return "CAST(" + v + " AS " + strings.NewReplacer("${precision}", fmt.Sprint(p), "${scale}", fmt.Sprint(s)).Replace(e.Cat.QueryColumns.Types[dialect.KindDecimal]) + ")"
}

// normDecimal drops trailing zeros after the point of a decimal's text.
func normDecimal(s string) string {
	s = strings.TrimSpace(s)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

func testQueryTableMissingWithCreationOff(t T, env *Env) {
	// Every other table exists; only the query table is missing.
	cfg := defaultConfig(env)
	cfg.QueryTables = nil
	openEngine(t, env, cfg)
	cfg = defaultConfig(env)
	cfg.Modes = map[dialect.Area]schema.Mode{dialect.AreaCQRS: schema.Never}
	err := tryOpen(t, env, cfg)
	expectQueryTableError(t, err, queryTableName(t, env.Features.fixtureQueryTable()), "", "query table missing with creation off")
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
	return newEnv(t, env.Target, env.Catalogue, nil)
}

// testUniqueAdmitsManyNulls: a unique query field is nullable (a pointer
// field stores NULL), so many read models may hold NULL in it, while a
// second equal value is refused as a unique violation. An engine whose
// UNIQUE admits one NULL (SQL Server) needs a filtered index in its
// QueryColumns.UniqueIndex.
func testUniqueAdmitsManyNulls(t T, env *Env) {
	e := openEngine(t, env, defaultConfig(env))
	table := queryTableName(t, env.Features.fixtureQueryTable())
	ctx := context.Background()
	ins := dialect.Compile("INSERT INTO "+table+" (read_model_id, message_id, iban) VALUES (#{id}, #{msg}, #{iban})", e.Cat.Identity.Placeholder)
	insert := func(id string, iban any) error {
		args, err := ins.Args(map[string]any{"id": id, "msg": "00000000-0000-0000-0000-00000000000" + id[len(id)-1:], "iban": iban})
		if err != nil {
			t.Fatalf("%v", err)
		}
		_, err = e.DB.ExecContext(ctx, ins.SQL, args...)
		return e.Errors.Wrap(err)
	}
	for _, id := range []string{"rm-1", "rm-2", "rm-3"} {
		if err := insert(id, nil); err != nil {
			t.Fatalf("read model %s with a NULL unique field: %v (QueryColumns.UniqueIndex must admit many NULLs, e.g. filtered WHERE ${column} IS NOT NULL)", id, err)
		}
	}
	if err := insert("rm-4", "DE02"); err != nil {
		t.Fatal(err)
	}
	err := insert("rm-5", "DE02")
	if err == nil {
		t.Fatalf("a second read model with iban DE02: accepted by a unique column")
	}
	expectClass(t, err, sqlerr.ErrUniqueViolation, "a second equal value in a unique query column")
}
