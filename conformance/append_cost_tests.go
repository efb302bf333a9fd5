package conformance

import (
	"context"
	"strings"
	"time"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/eventstore"
	"github.com/tidemarkdb/tidemark/internal/sqlcount"
	"github.com/tidemarkdb/tidemark/internal/testtime"
)

// testAnyAppendReadsNoVersion counts, through a counting driver wrapper,
// the statements of single-event appends with no expected version on a
// dialect whose insert computes the sequence number (Features.
// ComputedSequence): none of them is the stream-version read, the stream
// still numbers 0, 1, 2 and the versions Append reports are those numbers.
// On a counter row that is BEGIN, the counter, the insert, COMMIT (before
// ComputedTail MariaDB also read the version: 5 statements an append).
func testAnyAppendReadsNoVersion(t T, env *Env) {
	if !env.Features.ComputedSequence {
		skipf(t, "%s", "the dialect declares no insert that computes and returns the sequence number (RowInsert.NextSequence with positions drawn by the insert, or with ComputedTail on a counter row): a single-event Any append reads the stream's version")
	}
	ctx, cancel := testtime.Context(context.Background(), 2*time.Minute)
	defer cancel()
	counts := sqlcount.Counts{ByText: true}
	e := countedEngine(t, env, defaultConfig(env), &counts)
	s := eventstore.New(e, nil) // no advancer: only the append's statements
	const typ = "bank.Account"
	id := newID(t)
	read, err := e.Compile(dialect.StreamVersion, map[string]string{"event_store_table": e.Names.Shared["event_store_table"]})
	if err != nil {
		t.Fatalf("compiling %s: %v", dialect.StreamVersion, err)
	}
	counts.ResetTexts()
	for want := range int64(3) {
		res, err := s.Append(ctx, eventstore.Stream{AggregateType: typ, AggregateID: id, Expected: eventstore.Any,
			Events: []eventstore.Event{ev("test.E", `{}`)}})
		if err != nil {
			t.Fatalf("append %d: %v", want+1, err)
		}
		if v := res.Versions[typ+"/"+id]; v != want {
			t.Errorf("append %d: version %d, want %d", want+1, v, want)
		}
	}
	for _, x := range counts.Texts() {
		if strings.TrimSpace(x.SQL) == strings.TrimSpace(read.SQL) {
			t.Errorf("3 single-event Any appends sent the stream-version read %d times, want none: %s", x.Count, x.SQL)
		}
	}
	evs, err := s.Load(ctx, typ, id, -1)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	if len(evs) != 3 {
		t.Fatalf("stream has %d events, want 3", len(evs))
	}
	for i, x := range evs {
		if x.SequenceNo != int64(i) {
			t.Errorf("event %d: sequence_no %d, want %d", i, x.SequenceNo, i)
		}
	}
}
