package conformance

import (
	"context"
	"fmt"
	"time"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/eventstore"
	"github.com/tidemarkdb/tidemark/core/schema"
)

func timeTests() []Test {
	return []Test{
		{"time/event_time_round_trip", testEventTimeRoundTrip},
		{"time/query_instant_round_trip", testQueryInstantRoundTrip},
		{"time/query_time_of_day_cut_as_declared", testQueryTimeOfDay},
	}
}

// nanoTime has a non-zero digit in each of the nine fractional places and
// a 9 in the last, so an engine that rounds instead of cutting (…456789 to
// …4568) is told apart from one that cuts at the same digit.
var nanoTime = time.Date(2026, 3, 14, 15, 9, 26, 535897989, time.UTC)

// declaredDigits fails the test when the engine declares no precision:
// truncation must be declared, never silent.
func declaredDigits(t T, n int, field string) int {
	t.Helper()
	if n <= 0 || n > 9 {
		t.Fatalf("the catalogue declares %s = %d: declare how many fractional-second digits the engine keeps (1–9)", field, n)
	}
	return n
}

// checkTime compares a read-back time with the written one cut to the
// declared digits, and says which digits the engine kept instead.
func checkTime(t T, what string, wrote, got time.Time, digits int, field string) {
	t.Helper()
	want := truncate(nanoTime, digits)
	if got.Equal(want) {
		t.Logf("%s: wrote %s, read %s (%d digits, as declared)", what, wrote.Format(time.RFC3339Nano), got.Format(time.RFC3339Nano), digits)
		return
	}
	kept := "another value"
	for d := 0; d <= 9; d++ {
		if got.Equal(truncate(nanoTime, d)) {
			kept = fmt.Sprintf("the time cut to %d digits", d)
			break
		}
		if got.Equal(nanoTime.Round(time.Duration(pow10(9 - d)))) {
			kept = fmt.Sprintf("the time rounded to %d digits", d)
			break
		}
	}
	t.Errorf("%s: wrote %s, read %s (%s); %s = %d declares %s",
		what, wrote.Format(time.RFC3339Nano), got.Format(time.RFC3339Nano), kept, field, digits, want.Format(time.RFC3339Nano))
}

func pow10(n int) int64 {
	p := int64(1)
	for ; n > 0; n-- {
		p *= 10
	}
	return p
}

// testEventTimeRoundTrip appends an event whose time has nanoseconds and
// loads it back through the store: the time must equal the written one cut
// to EngineFacts.EventTimeDigits, so an engine that keeps fewer digits than
// it declares (or rounds) fails, and one that keeps more must declare more.
func testEventTimeRoundTrip(t T, env *Env) {
	digits := declaredDigits(t, env.Features.EventTimeDigits, "EngineFacts.EventTimeDigits")
	s, _ := openStore(t, env)
	ctx := context.Background()
	e := ev("bank.Opened", `{}`)
	e.OccurredAt = nanoTime
	if _, err := s.Append(ctx, eventstore.Stream{AggregateType: "bank.Account", AggregateID: "time-1", Events: []eventstore.Event{e}}); err != nil {
		t.Fatalf("Append: %v", err)
	}
	got, err := s.Load(ctx, "bank.Account", "time-1", -1)
	if err != nil || len(got) != 1 {
		t.Fatalf("Load: %d events, %v", len(got), err)
	}
	checkTime(t, "occurred_at", nanoTime, got[0].OccurredAt.UTC(), digits, "EngineFacts.EventTimeDigits")
}

// testQueryInstantRoundTrip writes a TEMPORAL_INSTANT of the fixture query
// table with a bound time.Time cut to EngineFacts.InstantDigits (as the
// core cuts what it binds) and reads it back: equal, so every declared
// digit is kept. What the engine does with more digits than it keeps (cut
// or round) is logged: the core never sends them.
func testQueryInstantRoundTrip(t T, env *Env) {
	digits := declaredDigits(t, env.Features.InstantDigits, "EngineFacts.InstantDigits")
	e := openEngine(t, env, defaultConfig(env))
	table := queryTableName(t, env.Features.fixtureQueryTable())
	write := func(id string, at time.Time) time.Time {
		t.Helper()
		ctx := context.Background()
		// A distinct iban per row: whether a unique column admits many NULLs
		// is querytable/unique_admits_many_nulls's question, not this one's.
		ins := dialect.Compile("INSERT INTO "+table+" (read_model_id, message_id, iban, opened_at) VALUES (#{id}, #{msg}, #{iban}, #{at})", e.Cat.Identity.Placeholder)
		args, err := ins.Args(map[string]any{"id": id, "msg": "00000000-0000-0000-0000-00000000000" + id[len(id)-1:], "iban": "iban-" + id, "at": at})
		if err != nil {
			t.Fatalf("%v", err)
		}
		if _, err := e.DB.ExecContext(ctx, ins.SQL, args...); err != nil {
			t.Fatalf("inserting an instant: %v", err)
		}
		var v any
		if err := e.DB.QueryRowContext(ctx, "SELECT opened_at FROM "+table+" WHERE read_model_id = '"+id+"'").Scan(&v); err != nil {
			t.Fatalf("reading it back: %v", err)
		}
		got, err := schema.AsTime(v, false)
		if err != nil {
			t.Fatalf("reading it back: %v", err)
		}
		return got
	}
	cut := truncate(nanoTime, digits)
	checkTime(t, "query-table instant", cut, write("rm-1", cut), digits, "EngineFacts.InstantDigits")
	raw := write("rm-2", nanoTime)
	t.Logf("with all nine digits bound, the engine stored %s", raw.Format(time.RFC3339Nano))
}
