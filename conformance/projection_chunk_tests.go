package conformance

import (
	"context"
	"fmt"
	"reflect"
	"time"

	"github.com/tidemarkdb/tidemark/core/consumer"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/eventstore"
	"github.com/tidemarkdb/tidemark/core/projection"
	"github.com/tidemarkdb/tidemark/internal/sqlcount"
)

// testProjectionChunkEqualsOneByOne: a projection applying its catch-up in
// chunks (its default Options) ends with the same read models, query-table
// rows and read-model topic messages, key by key and in order, as the same
// declaration applying one event per transaction — over creations,
// deposits, deletions, deletions of read models never stored and
// re-creations holding the deleted read model's unique value — and sends
// fewer statements than events (where rows are inserted one per statement,
// as on Firebird, under a third of what one event per transaction sends).
func testProjectionChunkEqualsOneByOne(t T, env *Env) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	chunked, single, cfg := chunkedAndSingle(env)
	var counts sqlcount.Counts
	ce := countedEngine(t, env, cfg, &counts)
	e := openEngine(t, env, cfg)
	s := eventstore.New(e, nil)
	events := appendChunkHistory(t, s)
	if _, err := advanceUntil(ctx, advancerOf(e), s, events.last); err != nil {
		t.Fatalf("advancing: %v", err)
	}
	stChunked := openProj(t, ce, chunked)
	stSingle := openProj(t, ce, single)
	nChunked := catchUpProj(ctx, t, ce, s, stChunked, &counts, events.n, nil)
	// One worker: applies of one partition's keys running at once would
	// each take the topic's counter row (counter dialects) before their
	// predecessors commit, and wait out predecessorWait in turn.
	nSingle := catchUpProj(ctx, t, ce, s, stSingle, &counts, events.n, func(o *consumer.Options) { o.TxBatch, o.Workers = 1, 1 })
	t.Logf("statements for %d events: %d in chunks, %d one event per transaction", events.n, nChunked, nSingle)
	if env.Catalogue.ReadModelInsert.MaxRows != 1 && nChunked >= int64(events.n) {
		t.Errorf("the chunked catch-up of %d events sent %d statements, want fewer than one per event", events.n, nChunked)
	}
	// Without multi-row inserts (Firebird) each row is a statement of its
	// own; the reads, deletions and commits are still the chunk's.
	if 3*nChunked >= nSingle {
		t.Errorf("the chunked catch-up of %d events sent %d statements, want under a third of one event per transaction's %d", events.n, nChunked, nSingle)
	}
	a, b := allModels(ctx, t, stChunked), allModels(ctx, t, stSingle)
	if len(a) != events.models {
		t.Errorf("%d read models after the chunked catch-up, want %d", len(a), events.models)
	}
	if !reflect.DeepEqual(a, b) {
		t.Errorf("read models differ:\n chunked %v\n one by one %v", a, b)
	}
	ma, mb := topicByKey(ctx, t, e, chunked.Name()), topicByKey(ctx, t, e, single.Name())
	if !reflect.DeepEqual(ma, mb) {
		t.Errorf("read-model topics differ:\n chunked %v\n one by one %v", ma, mb)
	}
	for _, col := range []string{"iban", "rank_no", "balance"} {
		for _, st := range []*projection.Store[projAccount]{stChunked, stSingle} {
			page, err := st.Find(ctx, projection.Query{OrderBy: col, Limit: 1000})
			if err != nil {
				t.Fatalf("Find by %s: %v", col, err)
			}
			if len(page.Items) != len(a) {
				t.Errorf("%s: Find ordered by %s found %d read models, want %d", st.Projection().Name(), col, len(page.Items), len(a))
			}
		}
	}
}

type chunkHistory struct {
	n, models int
	last      int64
}

// appendChunkHistory appends, in rounds so that a chunk holds events of
// many read models and several of one: 60 accounts opened with an IBAN and
// deposited to; every fifth closed, half of those reopened with the IBAN
// they held (their unique value deleted and inserted again in one chunk),
// the other half followed by a new account; "ghost" accounts closed
// without ever opening.
func appendChunkHistory(t T, s *eventstore.Store) chunkHistory {
	t.Helper()
	var h chunkHistory
	add := func(id string, evs ...any) {
		t.Helper()
		h.last = appendProjEvents(t, s, "bank.Account", id, evs...)
		h.n += len(evs)
	}
	const accounts = 60
	alive := 0
	for i := range accounts {
		add(fmt.Sprintf("c-%02d", i), projOpened{IBAN: fmt.Sprintf("IB-%02d", i), Rank: int64(i % 7)}, projDeposited{"1.25"})
		alive++
	}
	for round := range 3 {
		for i := range accounts {
			add(fmt.Sprintf("c-%02d", i), projDeposited{fmt.Sprintf("%d.10", round+1)})
		}
	}
	for i := 0; i < accounts; i += 5 {
		id := fmt.Sprintf("c-%02d", i)
		add(id, projDeposited{"3"}, projClosed{})
		alive--
		if i%10 == 0 {
			add(id, projOpened{IBAN: fmt.Sprintf("IB-%02d", i), Rank: 9}, projDeposited{"0.5"})
			alive++
		} else {
			add(fmt.Sprintf("heir-%02d", i), projOpened{IBAN: fmt.Sprintf("HE-%02d", i), Rank: 8})
			alive++
		}
		add(fmt.Sprintf("ghost-%02d", i), projClosed{}, projDeposited{"2"}, projClosed{})
	}
	h.models = alive
	return h
}

// chunkedAndSingle are the suite's account projection, applied in chunks,
// and the same declaration under another name for a one-event-per-
// transaction build to compare with, and a configuration with both tables.
func chunkedAndSingle(env *Env) (chunked, single *projection.Projection[projAccount], cfg engine.Config) {
	dec := env.Features.fixtureQueryTable().Fields[1]
	chunked = accountProjection(env)
	single = accountProjectionAs("account-summary-single", dec.Precision, dec.Scale, nil)
	cfg = defaultConfig(env)
	cfg.QueryTables = append(cfg.QueryTables, single.QueryTable())
	return chunked, single, cfg
}

// appendProjEvents appends evs (the suite's projection events, typed by
// their Go names) to one aggregate and returns the last one's position.
func appendProjEvents(t T, s *eventstore.Store, typ, id string, evs ...any) int64 {
	t.Helper()
	out := make([]eventstore.Event, 0, len(evs))
	for _, v := range evs {
		b, err := jsonOf(v)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, eventstore.Event{Type: fmt.Sprintf("%T", v)[len("conformance."):], Payload: b})
	}
	res, err := s.Append(context.Background(), eventstore.Stream{AggregateType: typ, AggregateID: id, Events: out})
	if err != nil {
		t.Fatalf("append to %s %s: %v", typ, id, err)
	}
	return res.Positions[len(res.Positions)-1]
}

func openProj(t T, e *engine.Engine, p *projection.Projection[projAccount]) *projection.Store[projAccount] {
	t.Helper()
	st, err := projection.Open(context.Background(), e, p)
	if err != nil {
		t.Fatalf("projection.Open(%s): %v", p.Name(), err)
	}
	return st
}

// catchUpProj polls st's consumer until it applied n events; it returns
// the statements the polls sent.
func catchUpProj(ctx context.Context, t T, e *engine.Engine, s *eventstore.Store, st *projection.Store[projAccount],
	counts *sqlcount.Counts, n int, tweak func(*consumer.Options)) int64 {
	t.Helper()
	opts, err := st.Options(consumer.EventStore(s, nil))
	if err != nil {
		t.Fatalf("Options: %v", err)
	}
	if tweak != nil {
		tweak(&opts)
	}
	r, err := consumer.NewRunner(ctx, consumer.NewRegistry(e, nil), opts)
	if err != nil {
		t.Fatalf("NewRunner: %v", err)
	}
	before := counts.Total()
	applied := 0
	for applied < n {
		k, err := r.Poll(ctx)
		if err != nil {
			t.Fatalf("poll: %v", err)
		}
		if k == 0 {
			t.Fatalf("%s: the polls applied %d of %d events, then none", st.Projection().Name(), applied, n)
		}
		applied += k
	}
	return counts.Total() - before
}

// allModels is every read model of st by key.
func allModels(ctx context.Context, t T, st *projection.Store[projAccount]) map[string]projAccount {
	t.Helper()
	page, err := st.Find(ctx, projection.Query{Limit: 1000})
	if err != nil {
		t.Fatalf("Find: %v", err)
	}
	out := map[string]projAccount{}
	for _, it := range page.Items {
		out[it.Key] = it.Value
	}
	return out
}

// topicByKey is each read model's messages on the topic, in order:
// payload, and "deleted" for a tombstone.
func topicByKey(ctx context.Context, t T, e *engine.Engine, topicName string) map[string][]string {
	t.Helper()
	c, err := e.CompileText(`SELECT read_model_key, payload, deleted FROM ${read_model_capture_records_table}
WHERE topic = #{topic} ORDER BY topic_position`, nil)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := e.QueryCompiled(ctx, e.DB, c, map[string]any{"topic": topicName})
	if err != nil {
		t.Fatalf("reading topic %s: %v", topicName, err)
	}
	defer rows.Close()
	out := map[string][]string{}
	for rows.Next() {
		var key string
		var payload []byte
		var deleted any
		if err := rows.Scan(&key, &payload, &deleted); err != nil {
			t.Fatalf("reading topic %s: %v", topicName, err)
		}
		out[key] = append(out[key], fmt.Sprintf("%s deleted=%v", payload, truthy(deleted)))
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("reading topic %s: %v", topicName, err)
	}
	return out
}

func truthy(v any) bool {
	switch v := v.(type) {
	case bool:
		return v
	case int64:
		return v != 0
	case []byte:
		s := string(v)
		return s == "1" || s == "true" || s == "TRUE" || s == "t"
	case string:
		return v == "1" || v == "true" || v == "TRUE" || v == "t"
	}
	return false
}
