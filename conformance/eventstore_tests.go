package conformance

import (
	"bytes"
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/eventstore"
)

func eventStoreTests() []Test {
	return []Test{
		{"eventstore/payload_round_trip", testPayloadRoundTrip},
		{"eventstore/key_edge_cases", testKeyEdgeCases},
		{"eventstore/expected_versions", testExpectedVersions},
		{"eventstore/any_append_reads_no_version", testAnyAppendReadsNoVersion},
		{"eventstore/stream_versions_read_flat", testStreamVersionsReadFlat},
		{"eventstore/optimistic_locking_concurrent", testOptimisticLocking},
		{"eventstore/conflict_actual_read", testConflictActualRead},
		{"eventstore/conflict_actual_concurrent", testConflictActualConcurrent},
		{"eventstore/known_version_moved_by_another_store", testKnownVersionMovedByAnother},
		{"eventstore/duplicate_event_id", testDuplicateEventID},
		{"eventstore/batch_all_or_nothing", testBatchAllOrNothing},
		{"eventstore/caller_transaction", testCallerTransaction},
		{"eventstore/per_aggregate_tables_global_order", testPerAggregateTables},
		{"eventstore/partitions", testPartitions},
		{"eventstore/partition_count_mismatch", testPartitionMismatch},
		{"eventstore/snapshots", testSnapshots},
		{"eventstore/connection_lost_mid_transaction", testConnectionLost},
		{"positions/gapless_after_rollback", testGaplessAfterRollback},
		{"positions/wrong_sequence_cache", testWrongSequenceCache},
	}
}

// appendAndPublish appends and moves the mark past the append.
func appendAndPublish(t T, s *eventstore.Store, e *engine.Engine, streams ...eventstore.Stream) eventstore.Appended {
	t.Helper()
	ctx := context.Background()
	res, err := s.Append(ctx, streams...)
	if err != nil {
		t.Fatalf("append: %v", err)
	}
	if len(res.Positions) > 0 {
		if _, err := advanceUntil(ctx, advancerOf(e), s, res.Positions[len(res.Positions)-1]); err != nil {
			t.Fatalf("advancing: %v", err)
		}
	}
	return res
}

func testPayloadRoundTrip(t T, env *Env) {
	s, e := openStore(t, env)
	payloads := []string{
		`{"b":1,"a":2}`,
		"{\n  \"spaced\" :   true ,\n\t\"tab\": [1, 2.50, 3e10]\n}",
		`{"emoji":"😀🎉","han":"漢字","rtl":"שלום","nul_escape":"\u0000","quote":"\"\\"}`,
		`{"n":12345678901234567890.123456789}`,
		`[]`,
		`"just a string"`,
		`{"big":"` + strings.Repeat("x", 200000) + `"}`,
	}
	meta := []string{"", `{"tenant":"t-1","actor":"😀"}`}
	for i, p := range payloads {
		evt := ev("test.Payload", p)
		if m := meta[i%2]; m != "" {
			evt.Metadata = []byte(m)
		}
		appendAndPublish(t, s, e, eventstore.Stream{AggregateType: "bank.Account", AggregateID: fmt.Sprintf("p-%d", i), Expected: eventstore.NoStream, Events: []eventstore.Event{evt}})
	}
	got, err := s.ReadAll(context.Background(), 0, 100)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	if len(got) != len(payloads) {
		t.Fatalf("read %d events, want %d", len(got), len(payloads))
	}
	for i, r := range got {
		if !bytes.Equal(r.Payload, []byte(payloads[i])) {
			t.Errorf("payload %d changed:\n got  %.120q\n want %.120q", i, r.Payload, payloads[i])
		}
		if m := meta[i%2]; m == "" && r.Metadata != nil || m != "" && string(r.Metadata) != m {
			t.Errorf("metadata %d = %q, want %q", i, r.Metadata, m)
		}
		if r.OccurredAt.Location().String() != "UTC" || r.OccurredAt.IsZero() {
			t.Errorf("occurred_at %v is not a UTC time", r.OccurredAt)
		}
	}
	// Not JSON: refused before the database, nothing stored.
	_, err = s.Append(context.Background(), eventstore.Stream{AggregateType: "bank.Account", AggregateID: "bad", Events: []eventstore.Event{ev("x", "{not json")}})
	if !errors.Is(err, eventstore.ErrInvalidEvent) {
		t.Errorf("invalid JSON payload: want ErrInvalidEvent, got %v", err)
	}
}

func testKeyEdgeCases(t T, env *Env) {
	s, e := openStore(t, env)
	ctx := context.Background()
	_, idLength, _ := env.Catalogue.Facts.AggregateIDFits("")
	four := mostFourByte(env.Catalogue.Facts, idLength)
	cases := []struct {
		name string
		id   string
		ok   bool
	}{
		{"empty", "", false},
		{"255 ASCII", strings.Repeat("a", 255), true},
		{"256 ASCII", strings.Repeat("a", 256), false},
		// 255 where the column counts characters or was widened to hold them
		// (EngineFacts.TextUnit, AggregateIDLength).
		{fmt.Sprintf("%d four-byte", four), strings.Repeat("😀", four), true},
		{fmt.Sprintf("%d four-byte", four+1), strings.Repeat("😀", four+1), false},
		{"lower", "account-1", true},
		{"upper (case-only difference is another aggregate)", "ACCOUNT-1", true},
		{"4-byte UTF-8", "konto-😀-Ω", true},
	}
	for _, c := range cases {
		_, err := s.Append(ctx, eventstore.Stream{AggregateType: "bank.Account", AggregateID: c.id, Expected: eventstore.NoStream,
			Events: []eventstore.Event{ev("test.Opened", `{"k":1}`)}})
		if c.ok && err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
		if !c.ok && !errors.Is(err, eventstore.ErrInvalidEvent) {
			t.Errorf("%s: want ErrInvalidEvent, got %v", c.name, err)
		}
	}
	for _, c := range cases {
		if !c.ok {
			continue
		}
		evs, err := s.Load(ctx, "bank.Account", c.id, -1)
		if err != nil {
			t.Fatalf("load %s: %v", c.name, err)
		}
		if len(evs) != 1 || evs[0].AggregateID != c.id || evs[0].SequenceNo != 0 {
			t.Errorf("%s: loaded %d events (%+v), want exactly its own one at sequence 0", c.name, len(evs), evs)
		}
	}
	_ = e
}

func testExpectedVersions(t T, env *Env) {
	s, _ := openStore(t, env)
	ctx := context.Background()
	st := func(exp eventstore.ExpectedVersion, n int) eventstore.Stream {
		evs := make([]eventstore.Event, n)
		for i := range evs {
			evs[i] = ev("test.Happened", fmt.Sprintf(`{"i":%d}`, i))
		}
		return eventstore.Stream{AggregateType: "bank.Account", AggregateID: "acc-1", Expected: exp, Events: evs}
	}
	check := func(what string, err error, actual int64) {
		t.Helper()
		ce := expectErr[*eventstore.ConcurrencyError](t, err, what)
		if ce.Actual != actual {
			t.Errorf("%s: actual version %d, want %d", what, ce.Actual, actual)
		}
		if !errors.Is(err, eventstore.ErrConcurrency) {
			t.Errorf("%s: errors.Is(ErrConcurrency) = false", what)
		}
	}
	_, err := s.Append(ctx, st(eventstore.StreamExists, 1))
	check("stream exists on empty stream", err, -1)
	_, err = s.Append(ctx, st(eventstore.Exactly(0), 1))
	check("exact 0 on empty stream", err, -1)
	res, err := s.Append(ctx, st(eventstore.NoStream, 2))
	if err != nil {
		t.Fatalf("no stream: %v", err)
	}
	if v := res.Versions["bank.Account/acc-1"]; v != 1 {
		t.Errorf("version after two events = %d, want 1", v)
	}
	_, err = s.Append(ctx, st(eventstore.NoStream, 1))
	check("no stream on existing stream", err, 1)
	_, err = s.Append(ctx, st(eventstore.Exactly(0), 1))
	check("stale exact version", err, 1)
	if _, err = s.Append(ctx, st(eventstore.Exactly(1), 1)); err != nil {
		t.Errorf("exact current version: %v", err)
	}
	if _, err = s.Append(ctx, st(eventstore.StreamExists, 1)); err != nil {
		t.Errorf("stream exists: %v", err)
	}
	if _, err = s.Append(ctx, st(eventstore.Any, 1)); err != nil {
		t.Errorf("any: %v", err)
	}
	evs, err := s.Load(ctx, "bank.Account", "acc-1", -1)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	for i, r := range evs {
		if r.SequenceNo != int64(i) {
			t.Errorf("event %d has sequence_no %d", i, r.SequenceNo)
		}
	}
	if len(evs) != 5 {
		t.Errorf("stream has %d events, want 5", len(evs))
	}
	after, _ := s.Load(ctx, "bank.Account", "acc-1", 2)
	if len(after) != 2 || after[0].SequenceNo != 3 {
		t.Errorf("load after 2: %d events", len(after))
	}
}

func testOptimisticLocking(t T, env *Env) {
	s, _ := openStore(t, env)
	ctx := context.Background()
	if _, err := s.Append(ctx, eventstore.Stream{AggregateType: "bank.Account", AggregateID: "race", Expected: eventstore.NoStream,
		Events: []eventstore.Event{ev("test.Opened", `{}`)}}); err != nil {
		t.Fatalf("seed: %v", err)
	}
	const writers = 8
	var wg sync.WaitGroup
	errs := make([]error, writers)
	start := make(chan struct{})
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			_, errs[i] = s.Append(ctx, eventstore.Stream{AggregateType: "bank.Account", AggregateID: "race", Expected: eventstore.Exactly(0),
				Events: []eventstore.Event{ev("test.Deposited", fmt.Sprintf(`{"writer":%d}`, i))}})
		}()
	}
	close(start)
	wg.Wait()
	wins := 0
	for i, err := range errs {
		if err == nil {
			wins++
			continue
		}
		var ce *eventstore.ConcurrencyError
		if !errors.As(err, &ce) {
			t.Errorf("writer %d: want a concurrency conflict, got %v", i, err)
			continue
		}
		if ce.Actual != 1 || ce.Expected != eventstore.Exactly(0) {
			t.Errorf("writer %d: conflict says expected %v actual %d, want expected version 0 actual 1", i, ce.Expected, ce.Actual)
		}
	}
	if wins != 1 {
		t.Errorf("%d writers won, want exactly 1", wins)
	}
	evs, _ := s.Load(ctx, "bank.Account", "race", -1)
	if len(evs) != 2 {
		t.Errorf("stream has %d events, want 2", len(evs))
	}
}

func testDuplicateEventID(t T, env *Env) {
	s, _ := openStore(t, env)
	ctx := context.Background()
	id := "0190f3c4-8a4e-7c3b-9a51-2f1e7b6d8c90"
	e1 := ev("test.Once", `{}`)
	e1.ID = id
	if _, err := s.Append(ctx, eventstore.Stream{AggregateType: "bank.Account", AggregateID: "d-1", Events: []eventstore.Event{e1}}); err != nil {
		t.Fatalf("first: %v", err)
	}
	_, err := s.Append(ctx, eventstore.Stream{AggregateType: "bank.Account", AggregateID: "d-2", Events: []eventstore.Event{e1}})
	if !errors.Is(err, eventstore.ErrDuplicateEvent) {
		t.Errorf("same id again: want ErrDuplicateEvent, got %v", err)
	}
	if evs, _ := s.Load(ctx, "bank.Account", "d-2", -1); len(evs) != 0 {
		t.Errorf("refused append stored %d events", len(evs))
	}
	bad := ev("test.Bad", `{}`)
	bad.ID = "not-a-uuid"
	if _, err := s.Append(ctx, eventstore.Stream{AggregateType: "bank.Account", AggregateID: "d-3", Events: []eventstore.Event{bad}}); !errors.Is(err, eventstore.ErrInvalidEvent) {
		t.Errorf("malformed id: want ErrInvalidEvent, got %v", err)
	}
}

func testBatchAllOrNothing(t T, env *Env) {
	s, _ := openStore(t, env)
	ctx := context.Background()
	if _, err := s.Append(ctx, eventstore.Stream{AggregateType: "bank.Account", AggregateID: "b-2", Events: []eventstore.Event{ev("test.Opened", `{}`)}}); err != nil {
		t.Fatal(err)
	}
	_, err := s.Append(ctx,
		eventstore.Stream{AggregateType: "bank.Account", AggregateID: "b-1", Expected: eventstore.NoStream, Events: []eventstore.Event{ev("a", `{}`), ev("b", `{}`)}},
		eventstore.Stream{AggregateType: "bank.BankAccount", AggregateID: "b-9", Expected: eventstore.NoStream, Events: []eventstore.Event{ev("c", `{}`)}},
		eventstore.Stream{AggregateType: "bank.Account", AggregateID: "b-2", Expected: eventstore.NoStream, Events: []eventstore.Event{ev("d", `{}`)}},
	)
	expectErr[*eventstore.ConcurrencyError](t, err, "batch with one conflicting stream")
	// The conflict may sit in a later stream of the same table, with an
	// exact version the stream does not have.
	_, err = s.Append(ctx,
		eventstore.Stream{AggregateType: "bank.Account", AggregateID: "b-3", Expected: eventstore.NoStream, Events: []eventstore.Event{ev("e", `{}`)}},
		eventstore.Stream{AggregateType: "bank.Account", AggregateID: "b-2", Expected: eventstore.Exactly(5), Events: []eventstore.Event{ev("f", `{}`)}},
	)
	ce := expectErr[*eventstore.ConcurrencyError](t, err, "batch whose second stream has a stale exact version")
	if ce.AggregateID != "b-2" || ce.Actual != 0 {
		t.Errorf("conflict names %s at %d, want b-2 at 0", ce.AggregateID, ce.Actual)
	}
	if evs, _ := s.Load(ctx, "bank.Account", "b-3", -1); len(evs) != 0 {
		t.Errorf("stream b-3 kept %d events of a failed batch", len(evs))
	}
	for _, id := range []string{"b-1", "b-9"} {
		typ := "bank.Account"
		if id == "b-9" {
			typ = "bank.BankAccount"
		}
		if evs, _ := s.Load(ctx, typ, id, -1); len(evs) != 0 {
			t.Errorf("stream %s kept %d events of a failed batch", id, len(evs))
		}
	}
}

func testCallerTransaction(t T, env *Env) {
	s, e := openStore(t, env)
	ctx := context.Background()
	for _, commit := range []bool{false, true} {
		tx, err := e.DB.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		id := fmt.Sprintf("tx-%v", commit)
		if _, err := s.AppendTx(ctx, tx, eventstore.Stream{AggregateType: "bank.Account", AggregateID: id, Events: []eventstore.Event{ev("test.InTx", `{}`)}}); err != nil {
			t.Fatalf("append in caller tx: %v", err)
		}
		if commit {
			err = tx.Commit()
		} else {
			err = tx.Rollback()
		}
		if err != nil {
			t.Fatal(err)
		}
		evs, _ := s.Load(ctx, "bank.Account", id, -1)
		if want := map[bool]int{false: 0, true: 1}[commit]; len(evs) != want {
			t.Errorf("commit=%v: %d events stored, want %d", commit, len(evs), want)
		}
	}
}

func testPerAggregateTables(t T, env *Env) {
	s, e := openStore(t, env)
	ctx := context.Background()
	types := []string{"bank.Account", "bank.BankAccount", "payments.Payment", "payments.Refund"}
	var want []string
	for round := range 3 {
		for _, typ := range types {
			id := fmt.Sprintf("same-id-%d", round%2) // ids repeat across types on other tables
			if typ == "payments.Refund" {
				id = fmt.Sprintf("refund-%d", round)
			}
			res := appendAndPublish(t, s, e, eventstore.Stream{AggregateType: typ, AggregateID: id, Events: []eventstore.Event{ev("test.E", fmt.Sprintf(`{"t":%q,"r":%d}`, typ, round))}})
			_ = res
			want = append(want, typ)
		}
	}
	got, err := s.ReadAll(ctx, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("read %d events across tables, want %d", len(got), len(want))
	}
	for i, r := range got {
		if r.AggregateType != want[i] {
			t.Errorf("event %d is %s, want %s (global order across tables)", i, r.AggregateType, want[i])
		}
		if i > 0 && r.GlobalPosition <= got[i-1].GlobalPosition {
			t.Errorf("positions not increasing at %d", i)
		}
	}
	// Paging across tables returns the same order.
	var paged []eventstore.Recorded
	for after := int64(0); ; {
		page, err := s.ReadAll(ctx, after, 5)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			break
		}
		paged = append(paged, page...)
		after = page[len(page)-1].GlobalPosition
	}
	if len(paged) != len(got) {
		t.Errorf("paged read %d events, want %d", len(paged), len(got))
	}
	// Payments and refunds share PAYMENTS_EVENTS, told apart by aggregate_type.
	if e.Names.ByAggregate["payments.Refund"].Events != "PAYMENTS_EVENTS" || e.Names.ByAggregate["bank.BankAccount"].Events != "BANK_ACCOUNT_EVENTS" {
		t.Errorf("table resolution: %+v", e.Names.ByAggregate)
	}
	if evs, _ := s.Load(ctx, "payments.Payment", "same-id-0", -1); len(evs) != 2 {
		t.Errorf("payment stream has %d events, want 2", len(evs))
	}
}

func testPartitionMismatch(t T, env *Env) {
	openEngine(t, env, defaultConfig(env)) // seeds 8
	cfg := defaultConfig(env)
	cfg.Partitions = 16
	_, err := engine.Open(context.Background(), env.DB, env.Catalogue, cfg)
	pm := expectErr[*engine.PartitionMismatchError](t, err, "reopening with another partition count")
	if pm.Persisted != 8 || pm.Configured != 16 || !contains(err.Error(), "8", "16") {
		t.Errorf("error must name both counts: %v", err)
	}
}

func testSnapshots(t T, env *Env) {
	s, _ := openStore(t, env)
	ctx := context.Background()
	for _, typ := range []string{"bank.Account", "bank.BankAccount"} {
		var evs []eventstore.Event
		for i := range 5 {
			evs = append(evs, ev("test.E", fmt.Sprintf(`{"i":%d}`, i)))
		}
		if _, err := s.Append(ctx, eventstore.Stream{AggregateType: typ, AggregateID: "snap-1", Events: evs}); err != nil {
			t.Fatal(err)
		}
		if _, ok, err := s.LatestSnapshot(ctx, typ, "snap-1", 1); err != nil || ok {
			t.Fatalf("%s: snapshot before any was saved: ok=%v err=%v", typ, ok, err)
		}
		for _, seq := range []int64{1, 3} {
			if err := s.SaveSnapshot(ctx, eventstore.Snapshot{AggregateType: typ, AggregateID: "snap-1", SequenceNo: seq, Payload: []byte(fmt.Sprintf(`{"upto": %d}`, seq))}); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.SaveSnapshot(ctx, eventstore.Snapshot{AggregateType: typ, AggregateID: "snap-1", SequenceNo: 4, Version: 2, Payload: []byte(`{"v2":true}`)}); err != nil {
			t.Fatal(err)
		}
		snap, rest, err := s.LoadWithSnapshot(ctx, typ, "snap-1", 1)
		if err != nil {
			t.Fatal(err)
		}
		if snap == nil || snap.SequenceNo != 3 || string(snap.Payload) != `{"upto": 3}` {
			t.Errorf("%s: latest v1 snapshot = %+v", typ, snap)
		}
		if len(rest) != 1 || rest[0].SequenceNo != 4 {
			t.Errorf("%s: events after snapshot = %d", typ, len(rest))
		}
		if v2, ok, _ := s.LatestSnapshot(ctx, typ, "snap-1", 2); !ok || v2.SequenceNo != 4 {
			t.Errorf("%s: v2 snapshot = %+v ok=%v", typ, v2, ok)
		}
	}
}

func testGaplessAfterRollback(t T, env *Env) {
	if !isCounter(env) {
		skipf(t, "positions are %s: a rolled-back append's positions are abandoned, not reused (the mark passes them once their transactions end)", env.Catalogue.Positions)
	}
	s, e := openStore(t, env)
	ctx := context.Background()
	var positions []int64
	for i := range 30 {
		tx, err := e.DB.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		res, err := s.AppendTx(ctx, tx, eventstore.Stream{AggregateType: "bank.Account", AggregateID: fmt.Sprintf("g-%d", i%4),
			Events: []eventstore.Event{ev("test.E", `{}`), ev("test.F", `{}`)}})
		if err != nil {
			t.Fatal(err)
		}
		if i%3 == 1 {
			_ = tx.Rollback()
			continue
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		positions = append(positions, res.Positions...)
	}
	for i, p := range positions {
		if p != int64(i+1) {
			t.Fatalf("position %d is %d: committed positions must be 1..N without gaps (%v)", i, p, positions)
		}
	}
	if _, err := advanceUntil(ctx, advancerOf(e), s, int64(len(positions))); err != nil {
		t.Fatal(err)
	}
	got, _ := s.ReadAll(ctx, 0, 1000)
	if len(got) != len(positions) {
		t.Errorf("read %d, want %d", len(got), len(positions))
	}
}

func testWrongSequenceCache(t T, env *Env) {
	if isCounter(env) {
		skipf(t, "positions are %s: no sequence, so no cache to get wrong", env.Catalogue.Positions)
	}
	ctx := context.Background()
	s, e := openStore(t, env)
	fix := env.Catalogue.Statements[dialect.PositionFixCache]
	if !strings.Contains(fix, "CACHE 1") {
		skipf(t, "cannot derive a wider-cache statement from %q", fix)
	}
	seq := e.Names.Shared["event_store_global_position_table"]
	widen := strings.ReplaceAll(strings.ReplaceAll(fix, "CACHE 1", "CACHE 20"), "${position_table}", seq)
	if _, err := e.DB.ExecContext(ctx, widen); err != nil {
		t.Fatal(err)
	}
	res, err := s.Append(ctx, eventstore.Stream{AggregateType: "bank.Account", AggregateID: "c-1", Events: []eventstore.Event{ev("test.E", `{}`)}})
	if err != nil {
		t.Fatal(err)
	}
	a := advancerOf(e)
	_, err = a.Cycle(ctx)
	sc := expectErr[*engine.SequenceCacheError](t, err, "advancing with a CACHE 20 sequence")
	if sc.Cache != 20 || !contains(err.Error(), "ALTER SEQUENCE", "CACHE 1") {
		t.Errorf("error must name the fix: %v", err)
	}
	if m, _ := s.Mark(ctx); m != 0 {
		t.Errorf("mark moved to %d with a wrong cache", m)
	}
	// With schema creation off, startup leaves the sequence alone; with it on, startup fixes it.
	cfg := defaultConfig(env)
	cfg.Modes = allNever()
	openEngine(t, env, cfg)
	if err := e.CheckSequenceCache(ctx); err == nil {
		t.Errorf("schema mode never must not alter the sequence")
	}
	openEngine(t, env, defaultConfig(env))
	if err := e.CheckSequenceCache(ctx); err != nil {
		t.Errorf("schema mode always must fix the cache: %v", err)
	}
	if _, err := advanceUntil(ctx, a, s, res.Positions[0]); err != nil {
		t.Errorf("after the fix: %v", err)
	}
}

// testConnectionLost: the connection of an open append transaction goes
// away (its driver connection is closed under it, as when the server or the
// network drops it). The commit fails with an error, nothing of the append
// is stored, positions stay gapless, and the next append works.
func testConnectionLost(t T, env *Env) {
	if env.Catalogue.Identity.Embedded {
		skipf(t, "embedded engine: there is no server or network connection to lose")
	}
	s, e := openStore(t, env)
	ctx := context.Background()
	before := appendAndPublish(t, s, e, eventstore.Stream{AggregateType: "bank.Account", AggregateID: "lost", Events: []eventstore.Event{ev("test.Before", `{}`)}})
	conn, err := e.DB.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendTx(ctx, tx, eventstore.Stream{AggregateType: "bank.Account", AggregateID: "lost", Events: []eventstore.Event{ev("test.Lost", `{}`)}}); err != nil {
		t.Fatal(err)
	}
	if err := conn.Raw(func(dc any) error { return dc.(driver.Conn).Close() }); err != nil {
		t.Fatalf("closing the driver connection: %v", err)
	}
	if err := tx.Commit(); err == nil {
		t.Fatalf("commit on a lost connection reported success")
	}
	conn.Close()
	evs, err := s.Load(ctx, "bank.Account", "lost", -1)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1 || evs[0].Type != "test.Before" {
		t.Fatalf("after the lost transaction the stream holds %d events (%v)", len(evs), evs)
	}
	after := appendAndPublish(t, s, e, eventstore.Stream{AggregateType: "bank.Account", AggregateID: "lost", Expected: eventstore.Exactly(0), Events: []eventstore.Event{ev("test.After", `{}`)}})
	if isCounter(env) && after.Positions[0] != before.Positions[0]+1 {
		t.Errorf("position after the lost transaction is %d, want %d (gapless)", after.Positions[0], before.Positions[0]+1)
	}
	all, _ := s.ReadAll(ctx, 0, 10)
	if len(all) != 2 {
		t.Errorf("read %d events, want 2", len(all))
	}
}
