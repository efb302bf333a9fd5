package conformance

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"time"

	"github.com/tidemarkdb/tidemark/core/consumer"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/eventstore"
	"github.com/tidemarkdb/tidemark/core/hwm"
	"github.com/tidemarkdb/tidemark/core/projection"
)

func projectionTests() []Test {
	return []Test{
		{"projection/apply_get_and_find_by_every_kind", testProjectionApplyFind},
		{"projection/delete_removes_row_and_publishes_tombstone", testProjectionDelete},
		{"projection/restart_applies_each_event_once", testProjectionRestart},
		{"projection/keyset_pages_with_nulls_both_directions", testProjectionPages},
		{"projection/concurrent_applies_on_one_read_model_lose_nothing", testProjectionConflicts},
		{"projection/declarations_refused_before_any_sql", testProjectionDeclarationsRefused},
		{"projection/global_scope_one_read_model_every_worker", testProjectionGlobal},
		{"projection/added_field_default_removed_field_ignored", testProjectionEvolution},
		{"projection/chained_downstream_converges_on_upstream", testProjectionChained},
		{"projection/compaction_keeps_every_read_model", testProjectionCompaction},
		{"projection/finder_range_reads_flat", testFinderRangeReadsFlat},
		{"projection/typed_finders_every_kind", testTypedFindersEveryKind},
		{"projection/typed_finder_handle_of_another_projection_refused", testTypedFinderForeignHandle},
		{"projection/pages_follow_column_values", testPagesFollowColumnValues},
		{"projection/pages_stable_under_concurrent_writes", testPagesStableUnderConcurrentWrites},
		{"projection/text_field_sized_to_the_engine_unit", testProjectionTextSizedToUnit},
		{"projection/in_memory_every_node_builds", testProjectionMemoryEveryNode},
		{"projection/in_memory_writes_nothing", testProjectionMemoryWritesNothing},
		{"projection/in_memory_refuses_chained_before_any_sql", testProjectionMemoryRefusesChained},
		{"projection/runner_compacts_its_topic", testProjectionRunnerCompacts},
		{"projection/unique_violation_typed", testProjectionUniqueViolationTyped},
		{"projection/listener_error_halt_and_skip", testProjectionListenerErrorHaltAndSkip},
		{"projection/listener_order_per_model_across_restarts", testProjectionListenerOrderAcrossRestarts},
		{"projection/single_owner_takeover_on_lapse", testProjectionSingleOwnerTakeover},
		{"projection/chunked_apply_equals_one_by_one", testProjectionChunkEqualsOneByOne},
		{"projection/chunked_apply_first_events_of_shared_ids", testProjectionChunkFirstEventsSharedIDs},
	}
}

// The suite's account projection, on the fixture query table
// (account-summary: iban unique, balance, opened_on, opened_at, active,
// rank_no).
type projAccount struct {
	IBAN     *string   `json:"iban,omitempty"`
	Balance  string    `json:"balance"`
	OpenedAt time.Time `json:"opened_at"`
	Active   bool      `json:"active"`
	Rank     int64     `json:"rank"`
	Deposits int       `json:"deposits"`
}

type projOpened struct {
	IBAN     string    `json:"iban,omitempty"`
	OpenedAt time.Time `json:"opened_at"`
	Rank     int64     `json:"rank"`
}

type projDeposited struct {
	Amount string `json:"amount"`
}

type projClosed struct{}

func addDecimal(a, b string) string {
	x, _ := new(big.Rat).SetString(a)
	y, _ := new(big.Rat).SetString(b)
	return new(big.Rat).Add(x, y).FloatString(2)
}

// accountProjection declares the suite's projection; its decimal's
// precision is the fixture table's on this engine.
func accountProjection(env *Env) *projection.Projection[projAccount] {
	dec := env.Features.fixtureQueryTable().Fields[1]
	return accountProjectionDigits(dec.Precision, dec.Scale)
}

// accountProjectionDigits is accountProjection with its decimal's digits
// given (a worker process has no Env).
func accountProjectionDigits(precision, scale int) *projection.Projection[projAccount] {
	return accountProjectionFailing(precision, scale, nil)
}

// accountProjectionFailing is accountProjectionDigits whose deposit
// listener returns fail's error first, when fail is set and returns one.
func accountProjectionFailing(precision, scale int, fail func(projDeposited, *projAccount) error) *projection.Projection[projAccount] {
	return accountProjectionAs("account-summary", precision, scale, fail)
}

// accountProjectionAs is accountProjectionFailing under another name, with
// the projection's options.
func accountProjectionAs(name string, precision, scale int, fail func(projDeposited, *projAccount) error, opts ...projection.Option) *projection.Projection[projAccount] {
	p := accountListeners(projection.New(name, func(string) projAccount { return projAccount{Balance: "0"} }, opts...), fail)
	projection.Field(p, "iban", projection.Text, func(s *projAccount) *string { return s.IBAN }, projection.Unique())
	projection.Field(p, "balance", projection.Decimal, func(s *projAccount) string { return s.Balance }, projection.Digits(precision, scale))
	projection.Field(p, "opened_on", projection.Date, openedAt)
	projection.Field(p, "opened_at", projection.Instant, openedAt)
	projection.Field(p, "active", projection.Boolean, func(s *projAccount) bool { return s.Active })
	projection.Field(p, "rank_no", projection.Integer, func(s *projAccount) int64 { return s.Rank })
	return p
}

// accountListeners declares the account projection's listeners on p; its
// deposit listener returns fail's error first, when fail is set and
// returns one.
func accountListeners(p *projection.Projection[projAccount], fail func(projDeposited, *projAccount) error) *projection.Projection[projAccount] {
	projection.On(p, func(e projOpened, s *projAccount) error {
		if e.IBAN != "" {
			s.IBAN = &e.IBAN
		}
		s.OpenedAt, s.Rank, s.Active = e.OpenedAt, e.Rank, true
		return nil
	})
	projection.On(p, func(e projDeposited, s *projAccount) error {
		if fail != nil {
			if err := fail(e, s); err != nil {
				return err
			}
		}
		s.Balance = addDecimal(s.Balance, e.Amount)
		s.Deposits++
		return nil
	})
	projection.On(p, func(projClosed, *projAccount) error { return projection.Delete })
	return p
}

// openedAt is an account's opening time, none before it opened.
func openedAt(s *projAccount) *time.Time {
	if s.OpenedAt.IsZero() {
		return nil
	}
	return &s.OpenedAt
}

// projRig is an engine, its event store and advancer, and the account
// projection's store.
type projRig struct {
	e   *engine.Engine
	s   *eventstore.Store
	adv *hwm.Advancer
	st  *projection.Store[projAccount]
}

func newProjRig(t T, env *Env) *projRig {
	r := newProjRigBare(t, env)
	st, err := projection.Open(context.Background(), r.e, accountProjection(env))
	if err != nil {
		t.Fatalf("projection.Open: %v", err)
	}
	r.st = st
	return r
}

// newProjRigBare is the rig without the account projection's store (a
// test opening another declaration of the fixture table).
func newProjRigBare(t T, env *Env) *projRig {
	e := openEngine(t, env, defaultConfig(env))
	ctx, stop := context.WithCancel(context.Background())
	t.Cleanup(stop)
	adv := hwm.New(e, hwm.Options{PollInterval: 10 * time.Millisecond})
	go func() { _ = adv.Run(ctx) }()
	return &projRig{e: e, s: eventstore.New(e, adv), adv: adv}
}

// run runs the projection's consumer until the returned stop is called.
func (r *projRig) run(t T, tweak func(*consumer.Options)) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	opts, err := r.st.Options(consumer.EventStore(r.s, r.adv))
	if err != nil {
		t.Fatalf("Options: %v", err)
	}
	opts.PollInterval = 20 * time.Millisecond
	if tweak != nil {
		tweak(&opts)
	}
	run, err := consumer.NewRunner(ctx, consumer.NewRegistry(r.e, nil), opts)
	if err != nil {
		t.Fatalf("consumer.NewRunner: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- run.Run(ctx) }()
	stop = func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("the projection's runner: %v", err)
		}
	}
	t.Cleanup(func() {
		select {
		case <-ctx.Done():
		default:
			stop()
		}
	})
	return stop
}

func (r *projRig) append(t T, typ, id string, events ...any) {
	t.Helper()
	var evs []eventstore.Event
	for _, e := range events {
		b, err := jsonOf(e)
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, eventstore.Event{Type: fmt.Sprintf("%T", e)[len("conformance."):], Payload: b})
	}
	if _, err := r.s.Append(context.Background(), eventstore.Stream{AggregateType: typ, AggregateID: id, Events: evs}); err != nil {
		t.Fatalf("append to %s: %v", id, err)
	}
}

// waitDeposits waits until read model id shows n deposits.
func (r *projRig) waitDeposits(t T, id string, n int) projAccount {
	t.Helper()
	var got projAccount
	waitForOr(t, fmt.Sprintf("read model %s with %d deposits", id, n), func() bool {
		v, ok, err := r.st.Get(context.Background(), id)
		if err != nil {
			t.Fatalf("Get(%s): %v", id, err)
		}
		got = v
		return ok && v.Deposits >= n
	}, func() string { return fmt.Sprintf("last read %+v", got) })
	if got.Deposits != n {
		t.Fatalf("read model %s has %d deposits, want %d", id, got.Deposits, n)
	}
	return got
}
