package conformance

import (
	"context"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/eventstore"
	"github.com/tidemarkdb/tidemark/internal/sqlcount"
)

// testGroupCommitExactConflicts forms one batch of callers that all expect
// exact versions (or no stream), as aggregates send them. Where the insert
// checks the versions itself, one refused caller fails the batch's one
// statement; the batch must then still refuse only that caller, with the
// version the stream really has, and commit the others: a stream already
// further (the unique key refuses), a stream behind the expected version (a
// gap the unique key cannot see), an existing stream appended with
// NoStream, and a caller expecting what an earlier, refused caller of the
// batch would have made; then a batch whose only refusal is a gap.
func testGroupCommitExactConflicts(t T, env *Env) {
	e := openEngine(t, env, defaultConfig(env))
	ctx := context.Background()
	seed := eventstore.New(e, nil)
	for id, n := range map[string]int{"gx-ok": 2, "gx-ahead": 2, "gx-gap": 2, "gx-taken": 1} {
		payloads := make([]string, n)
		for i := range payloads {
			payloads[i] = `{"seed":1}`
		}
		if _, err := seed.Append(ctx, one(id, eventstore.NoStream, payloads...)); err != nil {
			t.Fatalf("seeding %s: %v", id, err)
		}
	}
	g := newGate()
	s := eventstore.New(e, g, eventstore.WithGroupCommit(true))
	calls := []*call{
		{streams: []eventstore.Stream{one("gx-ok", eventstore.Exactly(1), `{"c":0}`)}},
		{streams: []eventstore.Stream{one("gx-ahead", eventstore.Exactly(0), `{"c":1}`)}},
		{streams: []eventstore.Stream{one("gx-new", eventstore.NoStream, `{"c":2}`, `{"c":2,"n":2}`)}},
		{streams: []eventstore.Stream{one("gx-gap", eventstore.Exactly(3), `{"c":3}`)}},
		{streams: []eventstore.Stream{one("gx-taken", eventstore.NoStream, `{"c":4}`)}},
		{streams: []eventstore.Stream{one("gx-ok", eventstore.Exactly(2), `{"c":5}`)}},
		{streams: []eventstore.Stream{one("gx-new2", eventstore.NoStream, `{"c":6}`), one("gx-ahead", eventstore.Exactly(1), `{"c":6}`)}},
	}
	queueBehindGate(t, s, g, calls)
	close(g.release)
	for _, c := range calls {
		<-c.done
	}
	if st := s.GroupCommitStats(); st.MaxCallers < int64(len(calls)) {
		t.Fatalf("the %d queued callers did not commit as one batch: %+v", len(calls), st)
	}
	for i, actual := range map[int]int64{1: 1, 3: 1, 4: 0} {
		ce := expectErr[*eventstore.ConcurrencyError](t, calls[i].err, "refused caller")
		if ce.Actual != actual {
			t.Errorf("caller %d: conflict with actual %d, want %d", i, ce.Actual, actual)
		}
	}
	for i, want := range map[int]map[string]int64{
		0: {"gx-ok": 2}, 2: {"gx-new": 1}, 5: {"gx-ok": 3}, 6: {"gx-new2": 0, "gx-ahead": 2},
	} {
		if calls[i].err != nil {
			t.Fatalf("caller %d: %v", i, calls[i].err)
		}
		checkOwnPositions(t, env, i, calls[i].res.Positions, countEvents(calls[i].streams))
		for id, v := range want {
			if got := calls[i].res.Versions["bank.Account/"+id]; got != v {
				t.Errorf("caller %d: %s at version %d, want %d", i, id, got, v)
			}
		}
	}
	// A batch whose only refusal is a gap: no unique key fails, so only a
	// check of the version can refuse it.
	g = newGate()
	s = eventstore.New(e, g, eventstore.WithGroupCommit(true))
	gapOnly := []*call{
		{streams: []eventstore.Stream{one("gx-gap", eventstore.Exactly(5), `{"c":7}`)}},
		{streams: []eventstore.Stream{one("gx-ok", eventstore.Exactly(3), `{"c":8}`)}},
	}
	queueBehindGate(t, s, g, gapOnly)
	close(g.release)
	for _, c := range gapOnly {
		<-c.done
	}
	if ce := expectErr[*eventstore.ConcurrencyError](t, gapOnly[0].err, "the caller behind its stream"); ce.Actual != 1 {
		t.Errorf("gap caller: conflict with actual %d, want 1", ce.Actual)
	}
	if gapOnly[1].err != nil {
		t.Fatalf("the other caller of the gap batch: %v", gapOnly[1].err)
	}
	for id, want := range map[string]int{"gx-ok": 5, "gx-ahead": 3, "gx-new": 2, "gx-gap": 2, "gx-taken": 1, "gx-new2": 1} {
		got, err := s.Load(ctx, "bank.Account", id, -1)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != want {
			t.Errorf("stream %s holds %d events, want %d", id, len(got), want)
		}
	}
}

// testGroupCommitExactOneStatement: where the insert draws the positions
// and the dialect checks an exact version in the insert (CheckedSequence),
// a batch of exact-version callers is one autocommit INSERT: no BEGIN, no
// version read, no COMMIT.
func testGroupCommitExactOneStatement(t T, env *Env) {
	counts := sqlcount.Counts{}
	e := countedEngine(t, env, defaultConfig(env), &counts)
	if e.Cat.Positions != dialect.SequenceXIDHorizon || e.Cat.EventInsert.CheckedSequence == "" {
		skipf(t, "%s", "the insert does not draw the positions or the dialect declares no CheckedSequence: a batch of exact versions reads them first")
	}
	ctx := context.Background()
	seed := eventstore.New(e, nil)
	for _, id := range []string{"go-a", "go-b", "go-c"} {
		if _, err := seed.Append(ctx, one(id, eventstore.NoStream, `{"seed":1}`)); err != nil {
			t.Fatalf("seeding %s: %v", id, err)
		}
	}
	g := newGate()
	s := eventstore.New(e, g, eventstore.WithGroupCommit(true))
	calls := []*call{
		{streams: []eventstore.Stream{one("go-a", eventstore.Exactly(0), `{"c":0}`)}},
		{streams: []eventstore.Stream{one("go-b", eventstore.Exactly(0), `{"c":1}`, `{"c":1,"n":2}`)}},
		{streams: []eventstore.Stream{one("go-c", eventstore.Exactly(0), `{"c":2}`), one("go-new", eventstore.NoStream, `{"c":2}`)}},
		{streams: []eventstore.Stream{one("go-a", eventstore.Exactly(1), `{"c":3}`)}},
	}
	queueBehindGate(t, s, g, calls)
	stmts, txs := counts.Statements.Load(), counts.Tx.Load()
	close(g.release)
	for _, c := range calls {
		<-c.done
	}
	for i, c := range calls {
		if c.err != nil {
			t.Fatalf("caller %d: %v", i, c.err)
		}
	}
	if st := s.GroupCommitStats(); st.MaxCallers < int64(len(calls)) {
		t.Fatalf("the %d queued callers did not commit as one batch: %+v", len(calls), st)
	}
	if n, tx := counts.Statements.Load()-stmts, counts.Tx.Load()-txs; n != 1 || tx != 0 {
		t.Errorf("the batch sent %d statements and %d BEGIN/COMMIT/ROLLBACK, want 1 and 0", n, tx)
	}
	if v := calls[3].res.Versions["bank.Account/go-a"]; v != 2 {
		t.Errorf("caller 3: go-a at version %d, want 2", v)
	}
}
