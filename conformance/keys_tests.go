package conformance

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/eventstore"
)

// keysTests check that keys are compared exactly on every engine: two keys
// that differ in a trailing space, in case or in Unicode normalisation are
// two streams (or two rows), never one; an id one aggregate type holds in a
// shared table is refused to another type with a typed error; invalid UTF-8
// is refused before any SQL.
func keysTests() []Test {
	return []Test{
		{"keys/trailing_space_distinct_streams", func(t T, env *Env) { testDistinctStreams(t, env, "acc-1", "acc-1 ") }},
		{"keys/case_distinct", func(t T, env *Env) { testDistinctStreams(t, env, "acc", "ACC") }},
		{"keys/nfc_nfd_distinct", func(t T, env *Env) { testDistinctStreams(t, env, "caf\u00e9", "cafe\u0301") }},
		{"keys/key_columns_exact", testKeyColumnsExact},
		{"keys/aggregate_id_taken_by_other_type", testAggregateIDTaken},
		{"keys/invalid_utf8_refused", testInvalidUTF8},
		{"keys/event_id_canonical", testEventIDCanonical},
	}
}

// refusesTrailingSpace reports whether the engine cannot keep "k " apart
// from "k" (the catalogue says so), so the core refuses such keys instead.
func refusesTrailingSpace(env *Env, key string) bool {
	return env.Catalogue.KeysIgnoreTrailingSpaces && strings.HasSuffix(key, " ")
}

// testDistinctStreams appends to a and b (in that order) with NoStream, then
// once more to each with its exact version, and reads both back: two
// streams of two events each, never merged, ids byte for byte.
func testDistinctStreams(t T, env *Env, a, b string) {
	s, e := openStore(t, env)
	ctx := context.Background()
	const typ = "bank.Account"
	if refusesTrailingSpace(env, b) {
		appendAndPublish(t, s, e, eventstore.Stream{AggregateType: typ, AggregateID: a, Expected: eventstore.NoStream, Events: []eventstore.Event{ev("test.Opened", `{}`)}})
		_, err := s.Append(ctx, eventstore.Stream{AggregateType: typ, AggregateID: b, Expected: eventstore.NoStream, Events: []eventstore.Event{ev("test.Opened", `{}`)}})
		if !errors.Is(err, eventstore.ErrInvalidEvent) {
			t.Fatalf("%s ignores trailing spaces: append to %q: want ErrInvalidEvent before any SQL, got %v", env.Catalogue.Identity.Name, b, err)
		}
		if evs, _ := s.Load(ctx, typ, a, -1); len(evs) != 1 {
			t.Errorf("stream %q has %d events after the refused append, want 1", a, len(evs))
		}
		return
	}
	for round := range 2 {
		for _, id := range []string{a, b} {
			exp := eventstore.NoStream
			if round > 0 {
				exp = eventstore.Exactly(0)
			}
			_, err := s.Append(ctx, eventstore.Stream{AggregateType: typ, AggregateID: id, Expected: exp,
				Events: []eventstore.Event{ev("test.E", fmt.Sprintf(`{"id":%q,"round":%d}`, id, round))}})
			if err != nil {
				t.Fatalf("append %d to %q (expected %s): %v (the engine compares %q and %q as one key)", round, id, exp, err, a, b)
			}
		}
	}
	seen := map[string]int{}
	for _, id := range []string{a, b} {
		evs, err := s.Load(ctx, typ, id, -1)
		if err != nil {
			t.Fatalf("load %q: %v", id, err)
		}
		if len(evs) != 2 {
			t.Errorf("load %q: %d events, want 2", id, len(evs))
		}
		for i, r := range evs {
			if r.AggregateID != id || r.SequenceNo != int64(i) || !strings.Contains(string(r.Payload), fmt.Sprintf("%q", id)) {
				t.Errorf("load %q: event %d is id %q seq %d payload %s", id, i, r.AggregateID, r.SequenceNo, r.Payload)
			}
		}
	}
	// ReadAll sees four events, two per id, each id exactly as appended.
	last := int64(0)
	if m, err := s.Mark(ctx); err == nil {
		last = m
	}
	if _, err := advanceUntil(ctx, advancerOf(e), s, last+4); err != nil {
		t.Fatalf("advancing: %v", err)
	}
	all, err := s.ReadAll(ctx, 0, 100)
	if err != nil {
		t.Fatalf("read all: %v", err)
	}
	for _, r := range all {
		seen[r.AggregateID]++
	}
	if len(all) != 4 || seen[a] != 2 || seen[b] != 2 {
		t.Errorf("ReadAll: %d events, per id %v, want 2 for %q and 2 for %q", len(all), seen, a, b)
	}
}

// keyColumnTables are spec tables whose key columns are all VARCHAR: a row
// per key variant must be accepted and found alone.
var keyColumnTables = []struct {
	table  string // names placeholder
	insert string // binds #{k}
	lookup string // one column, binds #{k}
}{
	{"topic_compaction_table", `INSERT INTO ${topic_compaction_table} (topic_name, compacted_through) VALUES (#{k}, 0)`,
		`SELECT COUNT(*) FROM ${topic_compaction_table} WHERE topic_name = #{k}`},
	{"partition_members_table", `INSERT INTO ${partition_members_table} (consumer_type, consumer_name, instance_id) VALUES (#{k}, #{k}, #{k})`,
		`SELECT COUNT(*) FROM ${partition_members_table} WHERE consumer_type = #{k} AND consumer_name = #{k} AND instance_id = #{k}`},
	{"read_model_epochs_table", `INSERT INTO ${read_model_epochs_table} (projection, read_model_key, epoch) VALUES (#{k}, #{k}, 0)`,
		`SELECT COUNT(*) FROM ${read_model_epochs_table} WHERE projection = #{k} AND read_model_key = #{k}`},
}

// testKeyColumnsExact stores key variants in spec tables other than the
// event tables (topics, consumer names, read-model keys) through the
// engine's own DDL, and the high-water-mark topics through its statements.
func testKeyColumnsExact(t T, env *Env) {
	_, e := openStore(t, env)
	ctx := context.Background()
	variants := []string{"k-1", "K-1", "caf\u00e9", "cafe\u0301"}
	if !env.Catalogue.KeysIgnoreTrailingSpaces {
		variants = append(variants, "k-1 ", "k-1  ")
	}
	for _, kt := range keyColumnTables {
		for _, k := range variants {
			if err := execText(ctx, e, kt.insert, map[string]any{"k": k}); err != nil {
				t.Errorf("%s: insert %q after %q: %v (the engine compares them as one key)", e.Names.Shared[kt.table], k, variants, err)
			}
		}
		for _, k := range variants {
			var n int64
			if err := queryText(ctx, e, kt.lookup, map[string]any{"k": k}, &n); err != nil || n != 1 {
				t.Errorf("%s: lookup %q found %d rows (err %v), want 1", e.Names.Shared[kt.table], k, n, err)
			}
		}
	}
}

func execText(ctx context.Context, e *engine.Engine, tmpl string, args map[string]any) error {
	c, err := e.CompileText(tmpl, nil)
	if err != nil {
		return err
	}
	a, err := c.Args(args)
	if err != nil {
		return err
	}
	_, err = e.DB.ExecContext(ctx, c.SQL, a...)
	return err
}

func queryText(ctx context.Context, e *engine.Engine, tmpl string, args map[string]any, dest ...any) error {
	c, err := e.CompileText(tmpl, nil)
	if err != nil {
		return err
	}
	a, err := c.Args(args)
	if err != nil {
		return err
	}
	return e.DB.QueryRowContext(ctx, c.SQL, a...).Scan(dest...)
}

// testAggregateIDTaken appends id "shared-1" as payments.Payment, then tries
// it as payments.Refund (same table, PAYMENTS_EVENTS) on every append path:
// each is refused with *AggregateIDTakenError naming the id, both types and
// the table, nothing is stored, and Load of the refund stream is empty, in
// agreement with the error (the refund stream has no version).
func testAggregateIDTaken(t T, env *Env) {
	s, e := openStore(t, env)
	ctx := context.Background()
	const id = "shared-1"
	owner, other := "payments.Payment", "payments.Refund"
	table := e.Names.ByAggregate[other].Events
	appendAndPublish(t, s, e, eventstore.Stream{AggregateType: owner, AggregateID: id, Expected: eventstore.NoStream, Events: []eventstore.Event{ev("test.Paid", `{}`)}})
	one := []eventstore.Event{ev("test.Refunded", `{}`)}
	two := []eventstore.Event{ev("test.Refunded", `{"n":1}`), ev("test.Refunded", `{"n":2}`)}
	bystander := eventstore.Stream{AggregateType: owner, AggregateID: "bystander", Expected: eventstore.NoStream, Events: one}
	cases := []struct {
		name    string
		streams []eventstore.Stream
	}{
		{"no stream", []eventstore.Stream{{AggregateType: other, AggregateID: id, Expected: eventstore.NoStream, Events: one}}},
		{"any, one event", []eventstore.Stream{{AggregateType: other, AggregateID: id, Expected: eventstore.Any, Events: one}}},
		{"any, two events", []eventstore.Stream{{AggregateType: other, AggregateID: id, Expected: eventstore.Any, Events: two}}},
		{"exactly 0", []eventstore.Stream{{AggregateType: other, AggregateID: id, Expected: eventstore.Exactly(0), Events: one}}},
		{"stream exists", []eventstore.Stream{{AggregateType: other, AggregateID: id, Expected: eventstore.StreamExists, Events: one}}},
		{"batch of two streams", []eventstore.Stream{bystander, {AggregateType: other, AggregateID: id, Expected: eventstore.NoStream, Events: two}}},
	}
	check := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, eventstore.ErrAggregateIDTaken) {
			t.Errorf("%s: want ErrAggregateIDTaken, got %v", what, err)
			return
		}
		var te *eventstore.AggregateIDTakenError
		if !errors.As(err, &te) || te.AggregateID != id || te.AggregateType != other || te.OwnerType != owner || te.Table != table {
			t.Errorf("%s: error %+v, want id %q, type %s, owner %s, table %s", what, te, id, other, owner, table)
		}
		if errors.Is(err, eventstore.ErrConcurrency) {
			t.Errorf("%s: %v must not read as a concurrency conflict", what, err)
		}
	}
	for _, c := range cases {
		_, err := s.Append(ctx, c.streams...)
		check("Append, "+c.name, err)
		tx, err := e.DB.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.AppendTx(ctx, tx, c.streams...)
		check("AppendTx, "+c.name, err)
		_ = tx.Rollback()
	}
	if evs, err := s.Load(ctx, other, id, -1); err != nil || len(evs) != 0 {
		t.Errorf("Load(%s, %q) = %d events (err %v), want none", other, id, len(evs), err)
	}
	if evs, _ := s.Load(ctx, owner, "bystander", -1); len(evs) != 0 {
		t.Errorf("the refused batch stored %d events of its other stream", len(evs))
	}
	// The owner's stream is untouched and goes on.
	if _, err := s.Append(ctx, eventstore.Stream{AggregateType: owner, AggregateID: id, Expected: eventstore.Exactly(0), Events: one}); err != nil {
		t.Errorf("owner append after the refusals: %v", err)
	}
	if evs, _ := s.Load(ctx, owner, id, -1); len(evs) != 2 {
		t.Errorf("owner stream has %d events, want 2", len(evs))
	}
	// The same on the shared event table: bank.Account against a type the
	// configuration does not name (it falls back to the shared table).
	appendAndPublish(t, s, e, eventstore.Stream{AggregateType: "bank.Account", AggregateID: id, Expected: eventstore.NoStream, Events: one})
	_, err := s.Append(ctx, eventstore.Stream{AggregateType: "misc.Unlisted", AggregateID: id, Expected: eventstore.NoStream, Events: one})
	if !errors.Is(err, eventstore.ErrAggregateIDTaken) {
		t.Errorf("shared table: want ErrAggregateIDTaken, got %v", err)
	}
}

// testInvalidUTF8 refuses invalid UTF-8 in every text of an append, with the
// field and byte offset, before any SQL: nothing is stored, and the next
// valid append to the same stream starts it at version 0.
func testInvalidUTF8(t T, env *Env) {
	s, e := openStore(t, env)
	ctx := context.Background()
	const typ = "bank.Account"
	bad := []struct{ name, doc string }{
		{"stray bytes", "{\"a\":\"\xff\xfe\"}"},
		{"overlong", "{\"a\":\"\xc0\xaf\"}"},
		{"surrogate", "{\"a\":\"\xed\xa0\x80\"}"},
	}
	type attempt struct {
		what   string
		field  string
		offset int
		stream eventstore.Stream
	}
	var attempts []attempt
	for _, b := range bad {
		p := ev("test.E", b.doc)
		m := ev("test.E", `{}`)
		m.Metadata = []byte(b.doc)
		attempts = append(attempts,
			attempt{b.name + " payload", "event 0 payload", 6, eventstore.Stream{AggregateType: typ, AggregateID: "u-1", Events: []eventstore.Event{p}}},
			attempt{b.name + " metadata", "event 1 metadata", 6, eventstore.Stream{AggregateType: typ, AggregateID: "u-1", Events: []eventstore.Event{ev("test.E", `{}`), m}}},
		)
	}
	attempts = append(attempts,
		attempt{"aggregate id", "aggregate id", 2, eventstore.Stream{AggregateType: typ, AggregateID: "u-\xff", Events: []eventstore.Event{ev("test.E", `{}`)}}},
		attempt{"aggregate type", "aggregate type", 4, eventstore.Stream{AggregateType: "bank\xc0\xaf", AggregateID: "u-1", Events: []eventstore.Event{ev("test.E", `{}`)}}},
		attempt{"event type", "event 0 type", 1, eventstore.Stream{AggregateType: typ, AggregateID: "u-1", Events: []eventstore.Event{ev("t\xed\xa0\x80", `{}`)}}},
	)
	for _, a := range attempts {
		_, err := s.Append(ctx, a.stream)
		var ue *eventstore.InvalidUTF8Error
		if !errors.As(err, &ue) || !errors.Is(err, eventstore.ErrInvalidUTF8) || !errors.Is(err, eventstore.ErrInvalidEvent) {
			t.Errorf("%s: want *InvalidUTF8Error (ErrInvalidUTF8, ErrInvalidEvent), got %v", a.what, err)
			continue
		}
		if ue.Field != a.field || ue.Offset != a.offset {
			t.Errorf("%s: error names %q at offset %d, want %q at %d", a.what, ue.Field, ue.Offset, a.field, a.offset)
		}
		tx, err := e.DB.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.AppendTx(ctx, tx, a.stream); !errors.Is(err, eventstore.ErrInvalidUTF8) {
			t.Errorf("AppendTx, %s: want ErrInvalidUTF8, got %v", a.what, err)
		}
		_ = tx.Rollback()
	}
	err := s.SaveSnapshot(ctx, eventstore.Snapshot{AggregateType: typ, AggregateID: "u-1", SequenceNo: 0, Payload: []byte(bad[0].doc)})
	if !errors.Is(err, eventstore.ErrInvalidUTF8) {
		t.Errorf("snapshot: want ErrInvalidUTF8, got %v", err)
	}
	if _, ok, _ := s.LatestSnapshot(ctx, typ, "u-1", 1); ok {
		t.Errorf("a refused snapshot was stored")
	}
	// Nothing was stored: the stream is empty, a NoStream append works and
	// its first event has sequence 0; ReadAll sees just it.
	if evs, _ := s.Load(ctx, typ, "u-1", -1); len(evs) != 0 {
		t.Fatalf("refused appends stored %d events", len(evs))
	}
	res := appendAndPublish(t, s, e, eventstore.Stream{AggregateType: typ, AggregateID: "u-1", Expected: eventstore.NoStream, Events: []eventstore.Event{ev("test.E", `{"ok":"é😀"}`)}})
	if v := res.Versions[typ+"/u-1"]; v != 0 {
		t.Errorf("valid append after the refusals: version %d, want 0", v)
	}
	all, err := s.ReadAll(ctx, 0, 100)
	if err != nil || len(all) != 1 || string(all[0].Payload) != `{"ok":"é😀"}` {
		t.Errorf("ReadAll after the refusals: %d events (err %v), want the one valid event", len(all), err)
	}
}

// testEventIDCanonical: an event id is a UUID whatever its spelling; upper
// case, braces and the urn form are stored canonically, so a second spelling
// of a stored id is a duplicate on every engine (not on some collations only).
func testEventIDCanonical(t T, env *Env) {
	s, e := openStore(t, env)
	ctx := context.Background()
	const lower = "0190f2a4-5b6c-7d8e-9f00-112233445566"
	first := ev("test.E", `{}`)
	first.ID = "urn:uuid:" + strings.ToUpper(lower)
	appendAndPublish(t, s, e, eventstore.Stream{AggregateType: "bank.Account", AggregateID: "ids-1", Expected: eventstore.NoStream, Events: []eventstore.Event{first}})
	evs, err := s.Load(ctx, "bank.Account", "ids-1", -1)
	if err != nil || len(evs) != 1 || evs[0].ID != lower {
		t.Fatalf("stored id: %+v (err %v), want %s", evs, err, lower)
	}
	for _, spelling := range []string{lower, strings.ToUpper(lower), "{" + lower + "}"} {
		again := ev("test.E", `{}`)
		again.ID = spelling
		_, err := s.Append(ctx, eventstore.Stream{AggregateType: "bank.Account", AggregateID: "ids-2", Events: []eventstore.Event{again}})
		if !errors.Is(err, eventstore.ErrDuplicateEvent) {
			t.Errorf("id %s again: want ErrDuplicateEvent, got %v", spelling, err)
		}
	}
}
