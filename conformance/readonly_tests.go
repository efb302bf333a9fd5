package conformance

import (
	"context"
	"errors"
	"time"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/eventstore"
	"github.com/tidemarkdb/tidemark/core/hwm"
	"github.com/tidemarkdb/tidemark/core/schema"
	"github.com/tidemarkdb/tidemark/core/sqlerr"
	"github.com/tidemarkdb/tidemark/core/topic"
	"github.com/tidemarkdb/tidemark/internal/testtime"
)

func readOnlyTests() []Test {
	return []Test{
		{"readonly/reads_and_follows", testReadOnlyReads},
		{"readonly/writes_refused", testReadOnlyWritesRefused},
		{"readonly/empty_database_refused", testReadOnlyEmpty},
		{"readonly/partition_count", testReadOnlyPartitions},
		{"readonly/existing_creates_nothing", testExistingCreatesNothing},
	}
}

// readOnlyConfig is defaultConfig opened read-only.
func readOnlyConfig(env *Env) engine.Config {
	cfg := defaultConfig(env)
	cfg.ReadOnly = true
	return cfg
}

// seededStore opens a read-write store on env, appends n events on the
// shared table and moves the mark past them.
func seededStore(t T, env *Env, n int) (*eventstore.Store, *engine.Engine) {
	t.Helper()
	s, e := openStore(t, env)
	ctx, cancel := testtime.Context(context.Background(), time.Minute)
	defer cancel()
	var last int64
	for i := 0; i < n; i++ {
		res, err := s.Append(ctx, eventstore.Stream{AggregateType: "bank.Account", AggregateID: "ro-1",
			Expected: eventstore.Exactly(int64(i - 1)), Events: []eventstore.Event{ev("Deposited", `{"n":1}`)}})
		if err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
		last = res.Positions[0]
	}
	if _, err := advanceUntil(ctx, advancerOf(e), s, last); err != nil {
		t.Fatal(err)
	}
	return s, e
}

// openReadOnly opens a read-only engine on a second pool of env's database.
func openReadOnly(t T, env *Env, cfg engine.Config) (*engine.Engine, error) {
	t.Helper()
	ctx, cancel := testtime.Context(context.Background(), time.Minute)
	defer cancel()
	e, err := engine.Open(ctx, env.OpenDB(), env.Catalogue, cfg)
	if err == nil {
		t.Cleanup(func() { e.Close() })
	}
	return e, err
}

// testReadOnlyReads: an engine opened read-only on an initialised database
// reads what the read-write engine appended (ReadAll, ReadPartition, Load)
// and follows what it appends next.
func testReadOnlyReads(t T, env *Env) {
	ws, _ := seededStore(t, env, 3)
	re, err := openReadOnly(t, env, readOnlyConfig(env))
	if err != nil {
		t.Fatalf("read-only open: %v", err)
	}
	if !re.ReadOnly() {
		t.Fatal("engine opened with ReadOnly reports ReadOnly() false")
	}
	rs := eventstore.New(re, nil)
	ctx, cancel := testtime.Context(context.Background(), 2*time.Minute)
	defer cancel()
	all, err := rs.ReadAll(ctx, 0, 100)
	if err != nil || len(all) != 3 {
		t.Fatalf("ReadAll on the read-only engine: %d events, %v (want 3)", len(all), err)
	}
	part, err := rs.ReadPartition(ctx, all[0].PartitionKey, 0, 100)
	if err != nil || len(part) != 3 {
		t.Fatalf("ReadPartition on the read-only engine: %d events, %v (want 3)", len(part), err)
	}
	stream, err := rs.Load(ctx, "bank.Account", "ro-1", -1)
	if err != nil || len(stream) != 3 {
		t.Fatalf("Load on the read-only engine: %d events, %v (want 3)", len(stream), err)
	}
	// Follow from the start: the three, then one appended by the writer.
	got := make(chan int64, 8)
	fctx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan error, 1)
	go func() {
		done <- rs.Follow(fctx, 0, eventstore.FollowOptions{PollInterval: 10 * time.Millisecond},
			func(r eventstore.Recorded) error { got <- r.GlobalPosition; return nil })
	}()
	res, err := ws.Append(ctx, eventstore.Stream{AggregateType: "bank.Account", AggregateID: "ro-1",
		Expected: eventstore.Exactly(2), Events: []eventstore.Event{ev("Deposited", `{"n":2}`)}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := advanceUntil(ctx, advancerOf(ws.Engine()), ws, res.Positions[0]); err != nil {
		t.Fatal(err)
	}
	var seen []int64
	for len(seen) < 4 {
		select {
		case p := <-got:
			seen = append(seen, p)
		case err := <-done:
			t.Fatalf("Follow ended: %v", err)
		case <-ctx.Done():
			t.Fatalf("Follow on the read-only engine delivered %v, want 4 events", seen)
		}
	}
	if seen[3] != res.Positions[0] {
		t.Fatalf("Follow delivered %v, want the last at %d", seen, res.Positions[0])
	}
}

// testReadOnlyWritesRefused: Append, AppendTx, an advancer's cycle and a
// capture-topic publish on a read-only engine fail with the typed error
// (errors.Is engine.ErrReadOnly and sqlerr.ErrReadOnly), and nothing is
// written.
func testReadOnlyWritesRefused(t T, env *Env) {
	ws, we := seededStore(t, env, 1)
	ctx, cancel := testtime.Context(context.Background(), time.Minute)
	defer cancel()
	hasTopic := env.Catalogue.Statements[dialect.TopicBounds] != ""
	if hasTopic {
		// The capture topic's mark row is seeded by its first read-write New.
		if _, err := topic.New(ctx, we); err != nil {
			t.Fatal(err)
		}
	}
	// One more event, not yet under the mark: an advancer has work to do
	// (an idle cycle only reads).
	if _, err := ws.Append(ctx, eventstore.Stream{AggregateType: "bank.Account", AggregateID: "ro-1",
		Expected: eventstore.Exactly(0), Events: []eventstore.Event{ev("Deposited", `{}`)}}); err != nil {
		t.Fatal(err)
	}
	re, err := openReadOnly(t, env, readOnlyConfig(env))
	if err != nil {
		t.Fatalf("read-only open: %v", err)
	}
	rs := eventstore.New(re, nil)
	check := func(what string, err error) {
		t.Helper()
		var ro *engine.ReadOnlyError
		if !errors.As(err, &ro) || !errors.Is(err, engine.ErrReadOnly) || !errors.Is(err, sqlerr.ErrReadOnly) {
			t.Errorf("%s on a read-only engine: want *engine.ReadOnlyError (errors.Is ErrReadOnly), got %T %v", what, err, err)
		}
	}
	for _, exp := range []eventstore.ExpectedVersion{eventstore.Any, eventstore.NoStream, eventstore.Exactly(0)} {
		_, err := rs.Append(ctx, eventstore.Stream{AggregateType: "bank.Account", AggregateID: "ro-new",
			Expected: exp, Events: []eventstore.Event{ev("Opened", `{}`), ev("Deposited", `{}`)}})
		check("Append ("+exp.String()+")", err)
		_, err = rs.Append(ctx, eventstore.Stream{AggregateType: "bank.Account", AggregateID: "ro-new",
			Expected: exp, Events: []eventstore.Event{ev("Opened", `{}`)}})
		check("single-event Append ("+exp.String()+")", err)
	}
	tx, err := re.DB.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = rs.AppendTx(ctx, tx, eventstore.Stream{AggregateType: "bank.Account", AggregateID: "ro-tx",
		Expected: eventstore.NoStream, Events: []eventstore.Event{ev("Opened", `{}`)}})
	_ = tx.Rollback()
	check("AppendTx", err)
	_, err = hwm.New(re, hwm.Options{}).Cycle(ctx)
	check("an advancer's Cycle", err)
	if _, err := re.BeginTx(ctx, engine.OpAppend); err == nil {
		t.Errorf("BeginTx(OpAppend) on a read-only engine succeeded")
	} else {
		check("BeginTx(OpAppend)", err)
	}
	if hasTopic {
		// The capture topic opens read-only (its mark row is seeded by the
		// read-write engine) and refuses to publish.
		tp, err := topic.New(ctx, re)
		if err != nil {
			t.Fatalf("topic.New on a read-only engine: %v", err)
		}
		_, err = tp.Publish(ctx, topic.Message{Key: "k", Type: "Noted", Payload: []byte(`{}`)})
		check("Publish", err)
	}
	// Nothing was written: the mark still stands below the second event,
	// and the refused streams are empty.
	all, err := ws.ReadAll(ctx, 0, 100)
	if err != nil || len(all) != 1 {
		t.Fatalf("after refused writes: %d events under the mark, %v (want 1)", len(all), err)
	}
	for _, id := range []string{"ro-new", "ro-tx"} {
		if evs, err := ws.Load(ctx, "bank.Account", id, -1); err != nil || len(evs) != 0 {
			t.Fatalf("stream %s after refused writes: %d events, %v", id, len(evs), err)
		}
	}
}

// testReadOnlyEmpty: a read-only open on an empty database fails with
// *engine.SchemaMissingError and creates nothing.
func testReadOnlyEmpty(t T, env *Env) {
	_, err := openReadOnly(t, env, readOnlyConfig(env))
	var missing *engine.SchemaMissingError
	if !errors.As(err, &missing) || !errors.Is(err, engine.ErrSchemaMissing) {
		t.Fatalf("read-only open on an empty database: want *engine.SchemaMissingError, got %T %v", err, err)
	}
	t.Logf("refused: %v", err)
	expectNoTables(t, env, "read-only open")
}

// expectNoTables fails for every table of the default schema that exists.
func expectNoTables(t T, env *Env, what string) {
	t.Helper()
	names, err := schema.Resolve(defaultConfig(env).Names)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := testtime.Context(context.Background(), time.Minute)
	defer cancel()
	for _, o := range schema.Objects(&env.Catalogue, names) {
		if o.Kind != dialect.ObjectTable {
			continue
		}
		ok, err := schema.TableExists(ctx, env.DB, &env.Catalogue, o.Name)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			t.Errorf("%s created table %s", what, o.Name)
		}
	}
}

// testExistingCreatesNothing: an Open with Config.Existing (the operator
// CLI's) on an empty database fails with *engine.SchemaMissingError and
// creates nothing; on an initialised one it opens, adopts the persisted
// partition count and writes.
func testExistingCreatesNothing(t T, env *Env) {
	cfg := defaultConfig(env)
	cfg.Existing, cfg.Partitions = true, 0
	_, err := openReadOnly(t, env, cfg)
	var missing *engine.SchemaMissingError
	if !errors.As(err, &missing) || !errors.Is(err, engine.ErrSchemaMissing) {
		t.Fatalf("Existing open on an empty database: want *engine.SchemaMissingError, got %T %v", err, err)
	}
	expectNoTables(t, env, "Existing open")
	seededStore(t, env, 1)
	e, err := openReadOnly(t, env, cfg)
	if err != nil {
		t.Fatalf("Existing open on an initialised database: %v", err)
	}
	if e.ReadOnly() || e.Partitions != defaultConfig(env).Partitions {
		t.Fatalf("Existing engine: read-only %v, %d partitions (want writable, %d)", e.ReadOnly(), e.Partitions, defaultConfig(env).Partitions)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := eventstore.New(e, nil).Append(ctx, eventstore.Stream{AggregateType: "bank.Account", AggregateID: "existing-1",
		Events: []eventstore.Event{{Type: "Opened", Payload: []byte(`{}`)}}}); err != nil {
		t.Fatalf("append through an Existing engine: %v", err)
	}
}

// testReadOnlyPartitions: a read-only engine adopts the persisted partition
// count when none is configured and refuses another one, typed.
func testReadOnlyPartitions(t T, env *Env) {
	seededStore(t, env, 1)
	cfg := readOnlyConfig(env)
	cfg.Partitions = 0
	e, err := openReadOnly(t, env, cfg)
	if err != nil {
		t.Fatalf("read-only open with no partition count: %v", err)
	}
	if e.Partitions != defaultConfig(env).Partitions {
		t.Fatalf("read-only engine has %d partitions, the database %d", e.Partitions, defaultConfig(env).Partitions)
	}
	cfg.Partitions = defaultConfig(env).Partitions + 1
	_, err = openReadOnly(t, env, cfg)
	expectErr[*engine.PartitionMismatchError](t, err, "read-only open with another partition count")
}
