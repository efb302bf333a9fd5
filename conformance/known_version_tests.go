package conformance

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/tidemarkdb/tidemark/core/eventstore"
)

// testKnownVersionMovedByAnother: a store remembers the versions its own
// appends committed and may append to such a stream without reading it
// (where the insert checks versions); a stream another store moved on since
// must still refuse an append expecting the old version, with the version
// it is at, and store nothing — alone, and in group-commit batches where
// some streams moved and others did not. A stream of another type under
// the same id is never appended to by a version remembered for the first.
func testKnownVersionMovedByAnother(t T, env *Env) {
	ctx := context.Background()
	mine, e := openStore(t, env)
	other := eventstore.New(e, nil) // another store: remembers nothing of mine
	const streams = 8
	ids := make([]string, streams)
	for i := range ids {
		ids[i] = newID(t)
		if _, err := mine.Append(ctx, eventstore.Stream{AggregateType: "bank.Account", AggregateID: ids[i], Expected: eventstore.NoStream,
			Events: []eventstore.Event{ev("test.Opened", `{}`), ev("test.Deposited", `{}`)}}); err != nil {
			t.Fatalf("opening %d: %v", i, err)
		}
	}
	// The other store moves the even streams to version 2.
	for i := 0; i < streams; i += 2 {
		if _, err := other.Append(ctx, eventstore.Stream{AggregateType: "bank.Account", AggregateID: ids[i], Expected: eventstore.Exactly(1),
			Events: []eventstore.Event{ev("test.Deposited", `{}`)}}); err != nil {
			t.Fatalf("moving %d: %v", i, err)
		}
	}
	// Every stream at once, each expecting version 1 (concurrent callers:
	// batches under group commit).
	errs := make([]error, streams)
	var wg sync.WaitGroup
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = mine.Append(ctx, eventstore.Stream{AggregateType: "bank.Account", AggregateID: ids[i], Expected: eventstore.Exactly(1),
				Events: []eventstore.Event{ev("test.Withdrawn", `{}`)}})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		want := int64(2) // version after the append
		if i%2 == 0 {
			ce := expectErr[*eventstore.ConcurrencyError](t, err, fmt.Sprintf("stream %d, moved by another store", i))
			if ce.Actual != 2 {
				t.Errorf("stream %d: conflict says version %d, want 2", i, ce.Actual)
			}
		} else if err != nil {
			t.Errorf("stream %d, not moved: %v", i, err)
		}
		evs, lerr := mine.Load(ctx, "bank.Account", ids[i], -1)
		if lerr != nil {
			t.Fatalf("Load %d: %v", i, lerr)
		}
		for j, r := range evs {
			if r.SequenceNo != int64(j) {
				t.Errorf("stream %d: event %d has sequence number %d (a gap or a duplicate)", i, j, r.SequenceNo)
			}
		}
		if int64(len(evs)) != want+1 {
			t.Errorf("stream %d holds %d events, want %d", i, len(evs), want+1)
		}
		if i%2 == 0 && len(evs) > 0 && evs[len(evs)-1].Type != "test.Deposited" {
			t.Errorf("stream %d: the refused append stored %s", i, evs[len(evs)-1].Type)
		}
	}
	// The refused streams append at their actual version now.
	if _, err := mine.Append(ctx, eventstore.Stream{AggregateType: "bank.Account", AggregateID: ids[0], Expected: eventstore.Exactly(2),
		Events: []eventstore.Event{ev("test.Withdrawn", `{}`)}}); err != nil {
		t.Errorf("appending at the version the conflict reported: %v", err)
	}
	// Another type under a remembered id (one shared table): refused,
	// nothing stored, whatever version it expects.
	_, err := mine.Append(ctx, eventstore.Stream{AggregateType: "bank.Loan", AggregateID: ids[1], Expected: eventstore.Exactly(2),
		Events: []eventstore.Event{ev("test.Granted", `{}`)}})
	var ce *eventstore.ConcurrencyError
	if err == nil || !errors.As(err, &ce) && !errors.Is(err, eventstore.ErrAggregateIDTaken) {
		t.Errorf("an append of another type to a remembered id: %v, want a conflict or ErrAggregateIDTaken", err)
	}
	if evs, _ := mine.Load(ctx, "bank.Loan", ids[1], -1); len(evs) != 0 {
		t.Errorf("another type's append stored %d events under a remembered id", len(evs))
	}
}
