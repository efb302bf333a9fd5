package conformance

import (
	"context"
	"database/sql"
	"errors"
	"sort"
	"strings"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/schema"
)

// specColumns are the columns of every shared table, in the spec's order.
var specColumns = map[string][]string{
	"event_store_table":                   {"id", "aggregate_id", "aggregate_type", "sequence_no", "event_type", "event_revision", "payload", "metadata", "occurred_at", "partition_key", "global_position"},
	"aggregate_snapshots_table":           {"id", "aggregate_id", "aggregate_type", "sequence_no", "snapshot_version", "payload", "created_at"},
	"partition_metadata_table":            {"id", "partitions"},
	"event_capture_records_table":         {"id", "global_position", "partition_key", "event_type", "event_revision", "payload", "metadata", "occurred_at", "message_key"},
	"high_water_mark_store_table":         {"topic_name", "high_water_mark", "pending_end", "pending_horizon", "topic_start", "lease_owner", "lease_expires_at"},
	"topic_compaction_table":              {"topic_name", "compacted_through"},
	"consumers_table":                     {"id", "consumer_type", "consumer_name", "state", "halt_reason", "epoch", "declaration_fingerprint", "state_since"},
	"consumer_checkpoints_table":          {"consumer_id", "source_name", "partition_no", "position", "incomplete_through", "replay_through", "epoch"},
	"consumer_undelivered_messages_table": {"id", "consumer_id", "source_name", "resolved_key", "key_hash", "message_position", "partition_no", "status", "failure_count", "next_retry_at", "failure_reason", "recorded_at", "unresolved", "message_copy"},
	"consumer_skipped_messages_table":     {"id", "consumer_id", "source_name", "partition_no", "message_position", "resolved_key", "every_key"},
	"partition_instances_table":           {"instance_id", "host_name", "started_at", "last_heartbeat", "expires_at"},
	"partition_ownership_table":           {"consumer_type", "consumer_name", "partition_no", "instance_id", "generation"},
	"partition_members_table":             {"consumer_type", "consumer_name", "instance_id"},
	"read_model_capture_records_table":    {"id", "topic", "topic_position", "partition_key", "read_model_key", "read_model_type", "read_model_revision", "payload", "metadata", "cascade_depth", "deleted", "occurred_at"},
	"read_model_epochs_table":             {"projection", "read_model_key", "epoch"},
	"saga_instances_table":                {"id", "saga_type", "saga_id", "state_json", "version", "completed_at"},
	"saga_deadlines_table":                {"id", "saga_type", "saga_id", "name", "due_at", "payload_json", "metadata_json"},
	"saga_deadline_locks_table":           {"lock_name", "owner", "expires_at"},
	"event_publication_metadata_table":    {"PUBLICATION_ID", "COMPLETION_DATE", "METADATA"},
}

// specIndexes are the named indexes the spec creates (derived from the
// table's own name), per placeholder.
var specIndexes = map[string][]string{
	"event_store_table":                {"idx_${t}_aggregate", "idx_${t}_partition"},
	"aggregate_snapshots_table":        {"idx_${t}_lookup"},
	"event_capture_records_table":      {"idx_${t}_partition", "idx_${t}_key"},
	"read_model_capture_records_table": {"idx_${t}_partition", "idx_${t}_key"},
	"consumer_skipped_messages_table":  {"idx_${t}_position"},
	"partition_ownership_table":        {"idx_${t}_instance_id"},
	"partition_members_table":          {"idx_${t}_instance_id"},
	"saga_deadlines_table":             {"idx_${t}_due_at"},
	"event_publication_metadata_table": {"idx_event_pub_meta_completion"},
}

func schemaTests() []Test {
	return []Test{
		{"schema/create_twice", testCreateTwice},
		{"schema/read_back_columns_and_indexes", testReadBack},
		{"schema/read_back_column_types", testReadBackColumnTypes},
		{"schema/seeds_not_overwritten", testSeedsNotOverwritten},
		{"schema/never_mode_missing_table", testNeverMissingTable},
		{"schema/never_mode_existing_schema", testNeverExisting},
		{"schema/invalid_identifiers_refused", testInvalidIdentifiers},
		{"schema/long_derived_names", testLongDerivedNames},
		{"schema/prefixes", testPrefixes},
		{"schema/case_insensitive_key_collation_refused", testKeyCollationRefused},
	}
}

// testCreateTwice opens the engine twice on one database and compares the
// whole catalogue read back after each: every table of the plan (shared,
// per-aggregate, query tables) with its columns, types, lengths,
// precisions, nullability and indexes. The second run must change nothing.
func testCreateTwice(t T, env *Env) {
	cfg := defaultConfig(env)
	first := openEngine(t, env, cfg)
	steps, err := schema.Plan(first.Cat, first.Names, cfg.QueryTables, "")
	if err != nil {
		t.Fatalf("schema.Plan: %v", err)
	}
	before := catalogueSnapshot(t, first, steps)
	e := openEngine(t, env, cfg)
	after := catalogueSnapshot(t, e, steps)
	if strings.Join(before, "\n") != strings.Join(after, "\n") {
		t.Errorf("the second run changed the catalogue:\n%s", diffLines(before, after))
	}
	ctx := context.Background()
	all := map[dialect.Area]bool{}
	for _, a := range []dialect.Area{dialect.AreaEventSourcing, dialect.AreaPartitioning, dialect.AreaMessaging, dialect.AreaCQRS, dialect.AreaSaga, dialect.AreaPublication} {
		all[a] = true
	}
	if err := schema.Verify(ctx, e.DB, e.Cat, schema.Objects(e.Cat, e.Names), all); err != nil {
		t.Fatalf("after two creations: %v", err)
	}
	t.Logf("%d catalogue lines identical after the second run", len(before))
}

// diffLines lists the lines only in a (-) and only in b (+).
func diffLines(a, b []string) string {
	in := func(xs []string) map[string]bool {
		m := map[string]bool{}
		for _, x := range xs {
			m[x] = true
		}
		return m
	}
	ina, inb := in(a), in(b)
	var out []string
	for _, x := range a {
		if !inb[x] {
			out = append(out, "- "+x)
		}
	}
	for _, x := range b {
		if !ina[x] {
			out = append(out, "+ "+x)
		}
	}
	return strings.Join(out, "\n")
}

func introspect(t T, e *engine.Engine, id string, table string) *sql.Rows {
	t.Helper()
	q := e.Cat.Introspection.Columns
	if id == "indexes" {
		q = e.Cat.Introspection.Indexes
	}
	if q == "" {
		skipf(t, "dialect has no %s introspection query", id)
	}
	c := dialect.Compile(q, e.Cat.Identity.Placeholder)
	args, err := c.Args(map[string]any{"table": foldName(e.Cat, table)})
	if err != nil {
		t.Fatalf("%v", err)
	}
	rows, err := e.DB.QueryContext(context.Background(), c.SQL, args...)
	if err != nil {
		t.Fatalf("introspecting %s of %s: %v", id, table, err)
	}
	return rows
}

func foldName(cat *dialect.Catalogue, n string) string {
	switch cat.Identity.FoldsUnquotedTo {
	case "lower":
		return strings.ToLower(n)
	case "upper":
		return strings.ToUpper(n)
	}
	return n
}

// tablesOf is every table of a placeholder: the per-aggregate event and
// snapshot tables as well as the shared ones.
func tablesOf(e *engine.Engine, ph string) []string {
	switch ph {
	case "event_store_table":
		return e.Names.EventTables
	case "aggregate_snapshots_table":
		return e.Names.SnapshotTables
	}
	return []string{e.Names.Shared[ph]}
}

func testReadBack(t T, env *Env) {
	e := openEngine(t, env, defaultConfig(env))
	for ph, want := range specColumns {
		tables := tablesOf(e, ph)
		for _, table := range tables {
			rows := introspect(t, e, "columns", table)
			var got []string
			for rows.Next() {
				var name, typ string
				var a, b, c, nullable any
				if err := rows.Scan(&name, &typ, &a, &b, &c, &nullable); err != nil {
					t.Fatalf("scanning columns of %s: %v", table, err)
				}
				got = append(got, strings.ToLower(name))
			}
			rows.Close()
			if strings.Join(got, ",") != strings.ToLower(strings.Join(want, ",")) {
				t.Errorf("%s columns:\n got  %v\n want %v", table, got, want)
			}
		}
	}
	checkKeys(t, e, defaultConfig(env))
}

// checkKeys compares every index, primary key and unique constraint the
// plan's DDL declares (with the names the dialect's naming produced) with
// the catalogue, on every table: shared, per-aggregate and query tables.
// The spec's named indexes must be in the plan under the spec's name
// wherever it fits the engine's limit.
func checkKeys(t T, e *engine.Engine, cfg engine.Config) {
	t.Helper()
	steps, err := schema.Plan(e.Cat, e.Names, cfg.QueryTables, cfg.Names.Prefixes[dialect.AreaCQRS])
	if err != nil {
		t.Fatalf("schema.Plan: %v", err)
	}
	declared, fks := declaredKeys(steps)
	for ph, idxs := range specIndexes {
		tables := tablesOf(e, ph)
		for _, table := range tables {
			named := map[string]bool{}
			for _, d := range declared[strings.ToLower(table)] {
				if d.Name != "" {
					named[strings.ToLower(d.Name)] = true
				}
			}
			shortened := 0
			for _, ix := range idxs {
				want := strings.ReplaceAll(ix, "${t}", table)
				switch {
				case named[strings.ToLower(want)]:
				case len(want) > e.Cat.Identity.MaxIdentifierLength:
					shortened++ // the dialect's naming rule names it
				default:
					t.Errorf("%s: the plan declares no index %s (declared: %v)", table, want, declared[strings.ToLower(table)])
				}
			}
			if shortened > 0 && len(named) < len(idxs) {
				t.Errorf("%s: %d spec indexes exceed %d characters, but the plan names only %v", table, shortened, e.Cat.Identity.MaxIdentifierLength, keys(named))
			}
		}
	}
	tables, keyCount := 0, 0
	for _, table := range planTables(e.Cat, steps) {
		d := declared[strings.ToLower(table)]
		compareKeys(t, table, d, fks[strings.ToLower(table)], readIndexes(t, e, table))
		tables++
		keyCount += len(d)
	}
	if tables == 0 || keyCount == 0 {
		t.Fatalf("no table or key found in the plan's %d steps", len(steps))
	}
	t.Logf("%d tables, %d declared indexes and keys compared with the catalogue", tables, keyCount)
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func testSeedsNotOverwritten(t T, env *Env) {
	ctx := context.Background()
	e := openEngine(t, env, defaultConfig(env))
	hwmTable := e.Names.Shared["high_water_mark_store_table"]
	if _, err := e.DB.ExecContext(ctx, "UPDATE "+hwmTable+" SET high_water_mark = 7 WHERE topic_name = 'event-store'"); err != nil {
		t.Fatalf("%v", err)
	}
	counter := e.Names.Shared["event_store_global_position_table"]
	if isCounter(env) {
		if _, err := e.DB.ExecContext(ctx, "UPDATE "+counter+" SET val = 42 WHERE id = 1"); err != nil {
			t.Fatalf("%v", err)
		}
	}
	e2 := openEngine(t, env, defaultConfig(env))
	var mark int64
	if err := e2.DB.QueryRowContext(ctx, "SELECT high_water_mark FROM "+hwmTable+" WHERE topic_name = 'event-store'").Scan(&mark); err != nil {
		t.Fatalf("%v", err)
	}
	if mark != 7 {
		t.Errorf("high-water mark reseeded: %d, want 7", mark)
	}
	var parts int
	if err := e2.QueryRow(ctx, e2.DB, dialect.PartitionRead, nil, nil).Scan(&parts); err != nil || parts != 8 {
		t.Errorf("partitions = %d (%v), want 8", parts, err)
	}
	if isCounter(env) {
		var val int64
		if err := e2.DB.QueryRowContext(ctx, "SELECT val FROM "+counter+" WHERE id = 1").Scan(&val); err != nil {
			t.Fatalf("%v", err)
		}
		if val != 42 {
			t.Errorf("position counter reseeded: %d, want 42", val)
		}
	}
}

func allNever() map[dialect.Area]schema.Mode {
	m := map[dialect.Area]schema.Mode{}
	for _, a := range []dialect.Area{dialect.AreaEventSourcing, dialect.AreaPartitioning, dialect.AreaMessaging, dialect.AreaCQRS, dialect.AreaSaga, dialect.AreaPublication} {
		m[a] = schema.Never
	}
	return m
}

func testNeverMissingTable(t T, env *Env) {
	cfg := defaultConfig(env)
	cfg.Modes = allNever()
	cfg.QueryTables = nil
	_, err := engine.Open(context.Background(), env.DB, env.Catalogue, cfg)
	mt := expectErr[*schema.MissingTableError](t, err, "startup on an empty database with schema creation off")
	if mt.Table == "" || mt.Script == "" || !contains(err.Error(), mt.Table, mt.Script) {
		t.Errorf("error must name the table and the script: %v", err)
	}
	if !errors.Is(err, schema.ErrMissingTable) {
		t.Errorf("errors.Is(ErrMissingTable) = false")
	}
}

func testNeverExisting(t T, env *Env) {
	openEngine(t, env, defaultConfig(env))
	cfg := defaultConfig(env)
	cfg.Modes = allNever()
	openEngine(t, env, cfg) // verifies and seeds without creating
}

func testInvalidIdentifiers(t T, env *Env) {
	bad := []schema.Config{
		{Prefixes: map[dialect.Area]string{dialect.AreaMessaging: "ACME-"}},
		{TableNames: map[string]string{"consumers_table": "1CONSUMERS"}},
		{TableNames: map[string]string{"consumers_table": "CONSUMERS; DROP TABLE X"}},
		{TableNames: map[string]string{"consumers_table": strings.Repeat("C", 64)}},
		{TableNames: map[string]string{"consumers_table": `"QUOTED"`}},
		{Aggregates: []schema.Aggregate{{Name: "Account", EventTable: "account events"}}},
		{Aggregates: []schema.Aggregate{{Name: "Ä" + strings.Repeat("x", 3), OwnTable: true}}},
	}
	for i, c := range bad {
		cfg := defaultConfig(env)
		cfg.Names = c
		_, err := engine.Open(context.Background(), env.DB, env.Catalogue, cfg)
		if !errors.Is(err, schema.ErrInvalidIdentifier) {
			t.Errorf("case %d (%+v): want ErrInvalidIdentifier, got %v", i, c, err)
		}
	}
	// Nothing was created by the refused configurations.
	_, err := engine.Open(context.Background(), env.DB, env.Catalogue, engine.Config{Modes: allNever(), Partitions: 8})
	expectErr[*schema.MissingTableError](t, err, "after refused configurations the database must still be empty")
}

// expectPlanVerdict opens cfg and checks it against the plan's verdict on
// the names the dialect's naming produces: refused with a NameTooLongError
// whose derived name is really over the engine's limit, or created with
// every planned index under exactly its planned name (never truncated).
func expectPlanVerdict(t T, env *Env, cfg engine.Config, table string) (refused *schema.NameTooLongError) {
	t.Helper()
	names, err := schema.Resolve(cfg.Names)
	if err != nil {
		t.Fatalf("schema.Resolve: %v", err)
	}
	_, planErr := schema.Plan(&env.Catalogue, names, cfg.QueryTables, cfg.Names.Prefixes[dialect.AreaCQRS])
	e, err := engine.Open(context.Background(), env.DB, env.Catalogue, cfg)
	limit := env.Catalogue.Identity.MaxIdentifierLength
	if planErr != nil {
		tl := expectErr[*schema.NameTooLongError](t, err, "a table whose derived names exceed the limit")
		if tl.Table != table || !contains(err.Error(), table) {
			t.Errorf("error must name the table %s: %v", table, err)
		}
		if len(tl.Derived) <= limit {
			t.Errorf("refused derived name %s is %d characters, within the limit %d", tl.Derived, len(tl.Derived), limit)
		}
		return tl
	}
	if err != nil {
		t.Fatalf("the plan's names fit the limit %d, but: %v", limit, err)
	}
	defer e.Close()
	checkKeys(t, e, cfg)
	return nil
}

func testLongDerivedNames(t T, env *Env) {
	// A 63-character table name is valid, but idx_<name>_partition is 77
	// characters as the spec names it: refused where the dialect's naming
	// gives a name over the engine's limit, created (under the planned
	// names, checked in the catalogue) where it fits. Never truncated.
	name := "E" + strings.Repeat("X", 62)
	cfg := defaultConfig(env)
	cfg.Names.Aggregates = []schema.Aggregate{{Namespace: "long", Name: "Long", EventTable: name, SnapshotTable: "LONG_SNAPS"}}
	expectPlanVerdict(t, env, cfg, name)
}

// testPrefixes opens the engine with a prefix per area and checks it is on
// every table of the area (and only there). Table names are never
// shortened, so each prefix is the suite's preferred one (ACME_, ES_, SG_,
// Q_) cut to fit the engine's MaxIdentifierLength before the area's
// longest table name: on Firebird 3 (31 characters) the messaging area's
// EVENT_CAPTURE_GLOBAL_POSITION (29) leaves room for "A_".
func testPrefixes(t T, env *Env) {
	cfg := defaultConfig(env)
	cfg.Names.TableNames = map[string]string{"consumers_table": "CONSUMER_ROWS"}
	preferred := map[dialect.Area]string{dialect.AreaMessaging: "ACME_", dialect.AreaEventSourcing: "ES_", dialect.AreaSaga: "SG_", dialect.AreaCQRS: "Q_"}
	cfg.Names.Prefixes = fittingPrefixes(t, env, cfg, preferred)
	p := cfg.Names.Prefixes
	e := openEngine(t, env, cfg)
	want := map[string]string{
		"consumers_table":                  p[dialect.AreaMessaging] + "CONSUMER_ROWS",
		"high_water_mark_store_table":      p[dialect.AreaMessaging] + "HIGH_WATER_MARK_STORE",
		"event_store_table":                p[dialect.AreaEventSourcing] + "EVENT_STORE",
		"saga_deadlines_table":             p[dialect.AreaSaga] + "SAGA_DEADLINES",
		"event_publication_metadata_table": "EVENT_PUBLICATION_METADATA",
	}
	for ph, w := range want {
		if got := e.Names.Shared[ph]; got != w {
			t.Errorf("%s = %s, want %s", ph, got, w)
		}
	}
	if got, w := e.Names.ByAggregate["bank.BankAccount"].Events, p[dialect.AreaEventSourcing]+"BANK_ACCOUNT_EVENTS"; got != w {
		t.Errorf("derived aggregate table = %s, want %s", got, w)
	}
	if got := e.Names.ByAggregate["payments.Payment"].Events; got != "PAYMENTS_EVENTS" {
		t.Errorf("explicit aggregate table = %s, want PAYMENTS_EVENTS (no prefix)", got)
	}
	// Every table of a prefixed area carries its prefix, but explicit
	// aggregate tables (named by the user, never prefixed).
	explicit := map[string]bool{"PAYMENTS_EVENTS": true}
	for _, a := range testAggregates {
		if a.EventTable != "" {
			explicit[a.EventTable] = true
		}
		if a.SnapshotTable != "" {
			explicit[a.SnapshotTable] = true
		}
	}
	for _, o := range schema.Objects(e.Cat, e.Names) {
		if pre := p[o.Area]; pre != "" && !explicit[o.Name] && !strings.HasPrefix(o.Name, pre) {
			t.Errorf("%s %s of area %s lacks the prefix %s", o.Kind, o.Name, o.Area, pre)
		}
	}
	all := map[dialect.Area]bool{dialect.AreaMessaging: true, dialect.AreaEventSourcing: true, dialect.AreaSaga: true}
	if err := schema.Verify(context.Background(), e.DB, e.Cat, schema.Objects(e.Cat, e.Names), all); err != nil {
		t.Errorf("prefixed schema: %v", err)
	}
}

// fittingPrefixes returns, per area, the preferred prefix, or where the
// area's longest table name with it would exceed the engine's limit, its
// first letters and "_" cut to fit (at least one letter: a limit that
// leaves less fails the test, since it would refuse every prefix).
func fittingPrefixes(t T, env *Env, cfg engine.Config, preferred map[dialect.Area]string) map[dialect.Area]string {
	t.Helper()
	names, err := schema.Resolve(cfg.Names)
	if err != nil {
		t.Fatalf("schema.Resolve: %v", err)
	}
	longest := map[dialect.Area]int{}
	for _, o := range schema.Objects(&env.Catalogue, names) {
		if len(o.Name) > longest[o.Area] {
			longest[o.Area] = len(o.Name)
		}
	}
	limit := env.Catalogue.Identity.MaxIdentifierLength
	out := map[dialect.Area]string{}
	for a, pre := range preferred {
		room := limit - longest[a]
		if limit <= 0 || room >= len(pre) {
			out[a] = pre
			continue
		}
		if room < 2 {
			t.Fatalf("area %s: its longest table name (%d characters) leaves no room for a prefix within %d", a, longest[a], limit)
		}
		out[a] = pre[:room-1] + "_"
		t.Logf("area %s: prefix %s (the preferred %s would make a %d-character name, over %d)", a, out[a], pre, longest[a]+len(pre), limit)
	}
	return out
}
