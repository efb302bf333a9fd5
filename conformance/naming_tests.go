package conformance

import (
	"context"
	"errors"
	"strings"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/eventstore"
	"github.com/tidemarkdb/tidemark/core/schema"
)

// namingTests check the naming plan: every name is checked as a whole,
// under the engine's own comparison, before any SQL runs.
func namingTests() []Test {
	return []Test{
		{"schema/naming_rules_declared", testNamingRulesDeclared},
		{"schema/naming_case_fold_refused", testCaseFoldRefused},
		{"schema/naming_roles_refused", testRolesRefused},
		{"schema/naming_reserved_words_declared", testReservedWordsDeclared},
		{"schema/naming_reserved_word_refused", testReservedWordRefused},
		{"schema/naming_long_composite_refused", testLongCompositeRefused},
		{"schema/naming_first_character_refused", testFirstCharacterRefused},
	}
}

// probeDDL runs one statement and says whether the engine accepted it.
func probeDDL(env *Env, stmt string) error {
	_, err := env.DB.ExecContext(context.Background(), stmt)
	return err
}

// namingProbe is one DDL statement of testNamingRulesDeclared and what the
// catalogue claims it does.
type namingProbe struct {
	what     string
	stmt     string
	distinct bool // what the catalogue claims: the statement creates a new object
}

// namingTables are the two tables the probes index. Every probe indexes a
// column no other probe indexes on the same table: an engine may skip an
// index that duplicates another one silently (Derby warns and creates
// nothing), which would read as "the name is taken".
var namingTables = []string{
	"CREATE TABLE nm_case (x INT, y INT, z INT, w INT)",
	"CREATE TABLE nm_other (x INT, y INT, z INT, w INT)",
}

// namingProbes are the statements that test each claim of n, in order.
func namingProbes(n dialect.Naming) []namingProbe {
	probes := []namingProbe{
		{"TablesCaseSensitive", "CREATE TABLE NM_CASE (x INT)", n.TablesCaseSensitive},
		{"IndexesCaseSensitive (first index)", "CREATE INDEX nm_ix ON nm_case (x)", true},
		{"IndexesCaseSensitive", "CREATE INDEX NM_IX ON nm_other (x)", n.IndexesCaseSensitive || n.IndexScope == dialect.IndexScopeTable},
		{"IndexScope (per table)", "CREATE INDEX nm_scope ON nm_case (y)", true},
		{"IndexScope " + string(n.IndexScope), "CREATE INDEX nm_scope ON nm_other (y)", n.IndexScope == dialect.IndexScopeTable},
		{"IndexScope (index named like a table)", "CREATE INDEX nm_other ON nm_case (z)", n.IndexScope != dialect.IndexScopeRelations},
	}
	if n.IndexScope == dialect.IndexScopeTable && !n.IndexesCaseSensitive {
		// Per-table index names: the case claim is tested on one table.
		probes = append(probes, namingProbe{"IndexesCaseSensitive (one table)", "CREATE INDEX NM_IX ON nm_case (w)", false})
	}
	return probes
}

// testNamingRulesDeclared checks each claim of Catalogue.Naming with plain
// DDL on the real engine.
func testNamingRulesDeclared(t T, env *Env) {
	for _, stmt := range namingTables {
		if err := probeDDL(env, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	for _, c := range namingProbes(env.Catalogue.Naming) {
		err := probeDDL(env, c.stmt)
		if c.distinct && err != nil {
			t.Errorf("%s: the catalogue says %q creates a new object, the engine refused it: %v", c.what, c.stmt, err)
		}
		if !c.distinct && err == nil {
			t.Errorf("%s: the catalogue says %q names an existing object, the engine created a second one", c.what, c.stmt)
		}
	}
}

// assertNothingCreated checks that no object of names (nor the query
// tables) exists: a refused configuration must leave the database as it was.
func assertNothingCreated(t T, env *Env, cfg engine.Config) {
	t.Helper()
	ctx := context.Background()
	names, err := schema.Resolve(cfg.Names)
	if err != nil {
		names, _ = schema.Resolve(schema.Config{})
	}
	objs := schema.Objects(&env.Catalogue, names)
	for _, q := range cfg.QueryTables {
		if qt, err := schema.ResolveQueryTable(q, cfg.Names.Prefixes[dialect.AreaCQRS]); err == nil {
			objs = append(objs, schema.Object{Name: qt, Kind: dialect.ObjectTable, Area: dialect.AreaCQRS})
		}
	}
	for _, o := range objs {
		err := schema.Verify(ctx, env.DB, &env.Catalogue, []schema.Object{o}, map[dialect.Area]bool{o.Area: true})
		if err == nil {
			t.Errorf("refused configuration created %s %s", o.Kind, o.Name)
		} else if !errors.Is(err, schema.ErrMissingTable) {
			t.Fatalf("checking %s: %v", o.Name, err)
		}
	}
}

// testCaseFoldRefused: an aggregate on "event_store" beside the shared
// EVENT_STORE is one table on an engine that ignores case, which made
// ReadAll return every event twice. It must be refused (naming both
// spellings) there, and on an engine that tells them apart give two tables
// each read once.
func testCaseFoldRefused(t T, env *Env) {
	ctx := context.Background()
	cfg := defaultConfig(env)
	cfg.QueryTables = nil
	cfg.Names.Aggregates = append(append([]schema.Aggregate{}, testAggregates...),
		schema.Aggregate{Namespace: "fold", Name: "Lower", EventTable: "event_store", SnapshotTable: "fold_snapshots"})
	e, err := engine.Open(ctx, env.DB, env.Catalogue, cfg)
	if err == nil {
		t.Cleanup(func() { e.Close() })
		s := eventstore.New(e, nil)
		appendAndPublish(t, s, e,
			eventstore.Stream{AggregateType: "bank.Account", AggregateID: "a-1", Expected: eventstore.NoStream, Events: []eventstore.Event{ev("test.A", `{}`)}},
			eventstore.Stream{AggregateType: "fold.Lower", AggregateID: "l-1", Expected: eventstore.NoStream, Events: []eventstore.Event{ev("test.L", `{}`)}})
		got, err := s.ReadAll(ctx, 0, 100)
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		if len(got) != 2 {
			t.Fatalf("EVENT_STORE beside event_store: ReadAll returned %d events after 2 appends (tables %v)", len(got), e.Names.EventTables)
		}
		if !env.Catalogue.Naming.TablesCaseSensitive {
			t.Fatalf("the catalogue says table names ignore case, but EVENT_STORE beside event_store was accepted")
		}
		return
	}
	nc := expectErr[*schema.NameConflictError](t, err, "EVENT_STORE beside event_store")
	if !contains(err.Error(), "EVENT_STORE", "event_store") || nc.Name == nc.Other {
		t.Errorf("the error must name both spellings: %v", err)
	}
	if !errors.Is(err, schema.ErrNameConflict) {
		t.Errorf("errors.Is(ErrNameConflict) = false")
	}
	assertNothingCreated(t, env, cfg)
	// Two aggregates on Acct_EVENTS and ACCT_EVENTS, the same way.
	cfg.Names.Aggregates = []schema.Aggregate{{Namespace: "a", Name: "One", EventTable: "Acct_EVENTS"}, {Namespace: "a", Name: "Two", EventTable: "ACCT_EVENTS"}}
	_, err = engine.Open(ctx, env.DB, env.Catalogue, cfg)
	expectErr[*schema.NameConflictError](t, err, "Acct_EVENTS beside ACCT_EVENTS")
	assertNothingCreated(t, env, cfg)
}

// testRolesRefused: one physical name for two roles fails mid-DDL or
// merges data; each is refused before any SQL and nothing is created.
func testRolesRefused(t T, env *Env) {
	ctx := context.Background()
	cases := map[string]func(*engine.Config){
		"consumer table named like the event table": func(c *engine.Config) {
			c.Names.TableNames = map[string]string{"consumers_table": "EVENT_STORE"}
		},
		"event table equal to its snapshot table": func(c *engine.Config) {
			c.Names.Aggregates = append(c.Names.Aggregates, schema.Aggregate{Namespace: "r", Name: "Same", EventTable: "SAME_TABLE", SnapshotTable: "SAME_TABLE"})
		},
		"two projections normalising to one query table": func(c *engine.Config) {
			c.QueryTables = []schema.QueryTable{
				{Projection: "acct-view", Fields: []schema.QueryField{{Column: "a", Kind: dialect.KindText}}},
				{Projection: "acct.view", Fields: []schema.QueryField{{Column: "b", Kind: dialect.KindText}}},
			}
		},
		"a query table named like a shared table": func(c *engine.Config) {
			c.QueryTables = []schema.QueryTable{{Projection: "p", Table: "CONSUMERS", Fields: []schema.QueryField{{Column: "a", Kind: dialect.KindText}}}}
		},
	}
	if env.Catalogue.Naming.IndexScope != dialect.IndexScopeTable {
		// idx_Q_A_b_c twice: table Q_A column b_c, table Q_A_b column c.
		cases["two query indexes with one derived name"] = func(c *engine.Config) {
			c.QueryTables = []schema.QueryTable{
				{Projection: "q1", Table: "Q_A", Fields: []schema.QueryField{{Column: "b_c", Kind: dialect.KindText}}},
				{Projection: "q2", Table: "Q_A_b", Fields: []schema.QueryField{{Column: "c", Kind: dialect.KindText}}},
			}
		}
	}
	for what, mod := range cases {
		cfg := defaultConfig(env)
		cfg.QueryTables = nil
		mod(&cfg)
		_, err := engine.Open(ctx, env.DB, env.Catalogue, cfg)
		var nc *schema.NameConflictError
		if !errors.As(err, &nc) {
			t.Errorf("%s: want *schema.NameConflictError, got %v", what, err)
			continue
		}
		if nc.Source == nc.OtherSource || !contains(err.Error(), nc.Source, nc.OtherSource) {
			t.Errorf("%s: the error must name both sources: %v", what, err)
		}
		assertNothingCreated(t, env, cfg)
	}
}

// testReservedWordRefused: a table or column named by a reserved word of
// the engine is refused before any SQL, nothing created.
func testReservedWordRefused(t T, env *Env) {
	if !declared(env.Catalogue.Naming.ReservedWords, "ORDER") {
		t.Fatalf("the catalogue does not declare ORDER reserved (every SQL engine reserves it)")
	}
	ctx := context.Background()
	cfgs := []engine.Config{defaultConfig(env), defaultConfig(env), defaultConfig(env)}
	cfgs[0].Names.TableNames = map[string]string{"consumers_table": "Order"}
	cfgs[1].QueryTables = []schema.QueryTable{{Projection: "p", Fields: []schema.QueryField{{Column: "select", Kind: dialect.KindText}}}}
	cfgs[2].Names.Aggregates = []schema.Aggregate{{Namespace: "r", Name: "Group", OwnTable: true, SnapshotTable: "group"}}
	for i, cfg := range cfgs {
		_, err := engine.Open(ctx, env.DB, env.Catalogue, cfg)
		expectErr[*schema.ReservedWordError](t, err, "reserved word, case "+string(rune('0'+i)))
		if !errors.Is(err, schema.ErrInvalidIdentifier) {
			t.Errorf("errors.Is(ErrInvalidIdentifier) = false: %v", err)
		}
		assertNothingCreated(t, env, cfg)
	}
}

// testFirstCharacterRefused: a name that is no regular identifier on every
// engine (a leading underscore, as an aggregate named only by punctuation
// derived: "_EVENTS") is refused before any SQL, and nothing is created.
func testFirstCharacterRefused(t T, env *Env) {
	ctx := context.Background()
	cfgs := []engine.Config{defaultConfig(env), defaultConfig(env), defaultConfig(env)}
	cfgs[0].Names.Aggregates = []schema.Aggregate{{Namespace: "x", Name: "!!!", OwnTable: true}}
	cfgs[1].Names.TableNames = map[string]string{"consumers_table": "_CONSUMERS"}
	cfgs[2].QueryTables = []schema.QueryTable{{Projection: "-p", Fields: []schema.QueryField{{Column: "a", Kind: dialect.KindText}}}}
	for i, cfg := range cfgs {
		_, err := engine.Open(ctx, env.DB, env.Catalogue, cfg)
		expectErr[*schema.InvalidNameError](t, err, "a name without a letter first, case "+string(rune('0'+i)))
		if !errors.Is(err, schema.ErrInvalidIdentifier) {
			t.Errorf("errors.Is(ErrInvalidIdentifier) = false: %v", err)
		}
		assertNothingCreated(t, env, defaultConfig(env))
	}
}

func declared(words []string, w string) bool {
	for _, x := range words {
		if strings.EqualFold(x, w) {
			return true
		}
	}
	return false
}

// testLongCompositeRefused: idx_<query table>_<column> is built from two
// names, each as long as the engine allows (63 at most). Over the engine's
// limit it is refused before any SQL (PostgreSQL used to truncate two such
// names into one and skip the second unique index; MariaDB failed with 1059
// midway), or, where the dialect declares a naming rule, created under the
// two distinct shortened names the plan gives. The table and column names
// themselves fit the limit: table names are never shortened.
func testLongCompositeRefused(t T, env *Env) {
	n := env.Catalogue.Identity.MaxIdentifierLength
	if n <= 0 || n > 63 {
		n = 63
	}
	table := "Q" + strings.Repeat("t", n-1)
	col1, col2 := "c"+strings.Repeat("x", n-2)+"1", "c"+strings.Repeat("x", n-2)+"2"
	cfg := defaultConfig(env)
	cfg.QueryTables = []schema.QueryTable{{Projection: "long", Table: table, Fields: []schema.QueryField{
		{Column: col1, Kind: dialect.KindText, Unique: true},
		{Column: col2, Kind: dialect.KindText, Unique: true},
	}}}
	tl := expectPlanVerdict(t, env, cfg, table)
	if tl == nil {
		return
	}
	if !strings.HasSuffix(tl.Derived, col1) {
		t.Errorf("error must name the table and the whole derived name: %+v", tl)
	}
	assertNothingCreated(t, env, cfg)
}
