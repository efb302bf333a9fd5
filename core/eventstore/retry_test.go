package eventstore

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/sqlerr"
	"github.com/tidemarkdb/tidemark/internal/sqlitetest"
)

func openSQLite(t *testing.T) *Store { return New(sqlitetest.Engine(t), nil) }

// TestWithIDsFixesIDsOnce: every event gets an id before the first try, the
// caller's slices are left as they were, and ids given are kept.
func TestWithIDsFixesIDsOnce(t *testing.T) {
	given := "0190a6c4-7f3e-7c1a-9d2e-3b4c5d6e7f80"
	in := []Stream{
		{AggregateType: "a", AggregateID: "1", Events: []Event{{ID: given}, {}}},
		{AggregateType: "a", AggregateID: "2", Events: []Event{{ID: given}}},
	}
	out, err := withIDs(in)
	if err != nil {
		t.Fatal(err)
	}
	if in[0].Events[1].ID != "" {
		t.Errorf("the caller's event was changed: %q", in[0].Events[1].ID)
	}
	if out[0].Events[0].ID != given || out[0].Events[1].ID == "" {
		t.Errorf("ids %q, %q", out[0].Events[0].ID, out[0].Events[1].ID)
	}
	if &out[1].Events[0] != &in[1].Events[0] {
		t.Error("a stream whose events all had ids was copied")
	}
	same, _ := withIDs(out)
	if &same[0] != &out[0] {
		t.Error("streams with every id set were copied")
	}
}

// TestRetryFindsItsOwnCommit: a try that committed although its caller saw
// an error (a connection lost during COMMIT) is found by the retry: the
// retried insert is refused (the stream moved, the ids are taken), and the
// stored events are then recognised as the append's own, with the
// positions and versions of the first try. Other events are not.
func TestRetryFindsItsOwnCommit(t *testing.T) {
	ctx := context.Background()
	s := openSQLite(t)
	if _, err := s.Append(ctx, Stream{AggregateType: "acc", AggregateID: "x", Expected: NoStream,
		Events: []Event{{Type: "E", Payload: []byte(`{}`)}}}); err != nil {
		t.Fatal(err)
	}
	streams, err := withIDs([]Stream{
		{AggregateType: "acc", AggregateID: "x", Expected: Exactly(0), Events: []Event{{Type: "E", Payload: []byte(`{}`)}, {Type: "E", Payload: []byte(`{}`)}}},
		{AggregateType: "acc", AggregateID: "y", Expected: Any, Events: []Event{{Type: "E", Payload: []byte(`{}`)}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	once := func() (Appended, error) { // one try, no retry
		p := newPending(ctx, streams)
		err := s.try(ctx, []*pending{p})
		if err == nil {
			err = p.err
		}
		return p.res, err
	}
	first, err := once()
	if err != nil {
		t.Fatal(err)
	}
	_, err = once()
	if !errors.Is(err, ErrConcurrency) && !errors.Is(err, ErrDuplicateEvent) {
		t.Fatalf("the retried try: want a conflict or a duplicate id, got %v", err)
	}
	got, ok, err := s.stored(ctx, streams)
	if err != nil || !ok {
		t.Fatalf("stored: ok=%v err=%v", ok, err)
	}
	if !slices.Equal(got.Positions, first.Positions) {
		t.Errorf("positions %v, want the first try's %v", got.Positions, first.Positions)
	}
	for k, v := range first.Versions {
		if got.Versions[k] != v {
			t.Errorf("version of %s: %d, want %d", k, got.Versions[k], v)
		}
	}
	other, _ := withIDs([]Stream{{AggregateType: "acc", AggregateID: "x", Expected: Exactly(0), Events: []Event{{Type: "E", Payload: []byte(`{}`)}}}})
	if _, ok, err := s.stored(ctx, other); ok || err != nil {
		t.Errorf("events never appended were recognised as stored (ok=%v, err=%v)", ok, err)
	}
}

// TestRetryTxStopsAtAPermanentError: fn runs once when it fails for a
// reason a retry cannot change, and its transaction is rolled back.
func TestRetryTxStopsAtAPermanentError(t *testing.T) {
	s := openSQLite(t)
	calls := 0
	boom := errors.New("boom")
	err := s.RetryTx(context.Background(), func(tx *sql.Tx) error {
		calls++
		if _, err := s.AppendTx(context.Background(), tx, Stream{AggregateType: "acc", AggregateID: "z",
			Events: []Event{{Type: "E", Payload: []byte(`{}`)}}}); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) || calls != 1 {
		t.Fatalf("err %v after %d calls, want boom after 1", err, calls)
	}
	if evs, err := s.Load(context.Background(), "acc", "z", -1); err != nil || len(evs) != 0 {
		t.Fatalf("rolled-back append stored %d events (%v)", len(evs), err)
	}
}

// TestDefaultRetryOutlastsMeasuredStarvation: the default budget's
// expected backoff (half of each try's ceiling, full jitter) covers twice
// the longest run of transient failures measured on a 3-node Galera
// cluster written through every node (4.4 s, docs/deployments.md), so a
// writer the cluster starves that long still gets through. 10 tries, the
// old default, slept about 0.33 s.
func TestDefaultRetryOutlastsMeasuredStarvation(t *testing.T) {
	const longestMeasured = 4400 * time.Millisecond
	r := DefaultRetry.WithDefaults()
	var expected time.Duration
	for attempt := 0; attempt+1 < r.Attempts; attempt++ {
		ceiling := r.Initial << min(attempt, 20)
		if ceiling > r.Max || ceiling <= 0 {
			ceiling = r.Max
		}
		expected += ceiling / 2
	}
	if r.Budget < 2*longestMeasured {
		t.Errorf("the default retry's time budget %v is below twice the longest starvation measured (%v)", r.Budget, 2*longestMeasured)
	}
	if expected < 2*longestMeasured {
		t.Errorf("the default retry (%d tries, %v to %v) sleeps %v on average, want at least %v",
			r.Attempts, r.Initial, r.Max, expected, 2*longestMeasured)
	}
}

// TestRetryBudgetBoundsSlowTransientErrors: a transient error that takes
// longer than the budget to come back (a lock wait timeout) is not tried
// again, and one that comes back at once stops being tried once the budget
// is spent, far below Attempts. With Attempts alone (the code before
// Budget) both ran 100 tries.
func TestRetryBudgetBoundsSlowTransientErrors(t *testing.T) {
	s := openSQLite(t)
	transient := &sqlerr.Error{Class: dialect.ErrDeadlock, Err: errors.New("deadlock")}
	cases := []struct {
		name     string
		each     time.Duration
		budget   time.Duration
		maxCalls int
	}{
		{"each try outlasts the budget", 60 * time.Millisecond, 50 * time.Millisecond, 1},
		{"tries fail fast", 10 * time.Millisecond, 50 * time.Millisecond, 6},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			calls := 0
			r := Retry{Attempts: 100, Budget: c.budget, Initial: time.Millisecond, Max: time.Millisecond}
			begin := func(ctx context.Context) (*sql.Tx, error) { return s.e.DB.BeginTx(ctx, nil) }
			err := retryTx(context.Background(), r, begin, class40, func(*sql.Tx) error {
				calls++
				time.Sleep(c.each)
				return transient
			})
			if !errors.Is(err, transient) {
				t.Fatalf("err %v, want the transient error", err)
			}
			if calls < 1 || calls > c.maxCalls {
				t.Fatalf("%d tries, want 1..%d within a budget of %v at %v a try", calls, c.maxCalls, c.budget, c.each)
			}
		})
	}
}
