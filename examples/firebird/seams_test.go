package firebird_test

import (
	"context"
	"testing"

	"github.com/nakagami/firebirdsql"

	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/eventstore"
)

// TestSingleRowInsertAndDeclaredIsolation: Firebird 3 has no multi-row
// VALUES. The dialect declares EventInsert.MaxRows = 1 (no longer a false
// MaxBindParameters) and READ COMMITTED for appends and the advancer; a
// two-stream batch of six events is stored one row per statement in one
// transaction at that level, with gapless positions.
func TestSingleRowInsertAndDeclaredIsolation(t *testing.T) {
	e, _ := openEngine(t)
	ctx := context.Background()
	if e.Cat.EventInsert.MaxRows != 1 || e.Cat.Identity.MaxBindParameters != 0 {
		t.Fatalf("max rows %d, max binds %d: want the single-row mode, no bind-limit workaround", e.Cat.EventInsert.MaxRows, e.Cat.Identity.MaxBindParameters)
	}
	if got := e.TxOptions(engine.OpAppend).Isolation.String(); got != "Read Committed" {
		t.Fatalf("append isolation %s, want Read Committed", got)
	}
	s := eventstore.New(e, nil)
	evs := []eventstore.Event{{Type: "E", Payload: []byte(`{}`)}, {Type: "E", Payload: []byte(`{}`)}, {Type: "E", Payload: []byte(`{}`)}}
	res, err := s.Append(ctx,
		eventstore.Stream{AggregateType: "t.A", AggregateID: "a-1", Events: evs},
		eventstore.Stream{AggregateType: "t.A", AggregateID: "a-2", Events: evs})
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range res.Positions {
		if p != int64(i+1) {
			t.Fatalf("positions %v, want 1..6", res.Positions)
		}
	}
	got, err := s.ReadUpTo(ctx, 0, 100, 100)
	if err != nil || len(got) != 6 {
		t.Fatalf("read %d events (%v), want 6", len(got), err)
	}
}

// TestRandomCodeTextsClassified: Firebird sends some conditions as
// isc_random (335544382) with only a text; the two a concurrent update
// causes are transient (the core reads or applies again), any other text
// under that code is not.
func TestRandomCodeTextsClassified(t *testing.T) {
	e, _ := openEngine(t)
	for _, c := range []struct {
		text      string
		transient bool
	}{
		{"BLOB not found\n", true},
		{"cannot update erased record\n", true},
		{"some other message\n", false},
	} {
		err := &firebirdsql.FbError{GDSCodes: []int{335544382}, SQLCode: -901, SQLState: "HY000", Message: c.text}
		if got := e.Transient(err); got != c.transient {
			t.Errorf("isc_random %q: transient %v, want %v", c.text, got, c.transient)
		}
	}
}
