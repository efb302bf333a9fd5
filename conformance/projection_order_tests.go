package conformance

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"time"

	"github.com/tidemarkdb/tidemark/core/consumer"
	"github.com/tidemarkdb/tidemark/core/projection"
)

// projSeqs is a read model that lists the sequence numbers of the events
// applied to it, in apply order.
type projSeqs struct {
	Seqs []int64 `json:"seqs"`
}

// seqProjection is the account projection's identity and query fields (the
// fixture table) over projSeqs: each deposit appends its sequence number.
func seqProjection(env *Env) *projection.Projection[projSeqs] {
	dec := env.Features.fixtureQueryTable().Fields[1]
	p := projection.New[projSeqs]("account-summary", nil)
	projection.OnType(p, "projDeposited", func(e projection.Event[projDeposited], s *projSeqs) error {
		s.Seqs = append(s.Seqs, e.Recorded.SequenceNo)
		return nil
	})
	projection.Field(p, "iban", projection.Text, func(*projSeqs) *string { return nil }, projection.Unique())
	projection.Field(p, "balance", projection.Decimal, func(*projSeqs) string { return "0" }, projection.Digits(dec.Precision, dec.Scale))
	projection.Field(p, "opened_on", projection.Date, func(*projSeqs) *time.Time { return nil })
	projection.Field(p, "opened_at", projection.Instant, func(*projSeqs) *time.Time { return nil })
	projection.Field(p, "active", projection.Boolean, func(*projSeqs) bool { return false })
	projection.Field(p, "rank_no", projection.Integer, func(s *projSeqs) int64 { return int64(len(s.Seqs)) })
	return p
}

// Across several stops and starts (each stop while events are still being
// applied), every read model's listeners ran once per event, in the
// stream's order: the list each model keeps equals its stream's sequence
// numbers.
func testProjectionListenerOrderAcrossRestarts(t T, env *Env) {
	ctx := context.Background()
	r := newProjRigBare(t, env)
	st, err := projection.Open(ctx, r.e, seqProjection(env))
	if err != nil {
		t.Fatalf("projection.Open: %v", err)
	}
	const models, cycles, perCycle = 4, 4, 6
	for c := range cycles {
		run := startSeqRunner(t, r, st)
		for i := range perCycle {
			for m := range models {
				r.append(t, "bank.Account", fmt.Sprintf("o-%d", m), projDeposited{fmt.Sprint(c*perCycle + i)})
			}
		}
		run()
	}
	startSeqRunner(t, r, st)
	for m := range models {
		id := fmt.Sprintf("o-%d", m)
		evs, err := r.s.Load(ctx, "bank.Account", id, -1)
		if err != nil || len(evs) != cycles*perCycle {
			t.Fatalf("Load(%s): %d events, %v", id, len(evs), err)
		}
		want := make([]int64, len(evs))
		for i, e := range evs {
			want[i] = e.SequenceNo
		}
		var got projSeqs
		waitForOr(t, id+" with every event", func() bool {
			v, ok, err := st.Get(ctx, id)
			if err != nil {
				t.Fatalf("Get(%s): %v", id, err)
			}
			got = v
			return ok && len(v.Seqs) >= len(want)
		}, func() string { return fmt.Sprintf("last read %v", got.Seqs) })
		if !reflect.DeepEqual(got.Seqs, want) {
			t.Errorf("%s applied %v; want each event once in order: %v", id, got.Seqs, want)
		}
	}
}

// startSeqRunner runs st's consumer until the returned stop is called.
func startSeqRunner(t T, r *projRig, st *projection.Store[projSeqs]) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	opts, err := st.Options(consumer.EventStore(r.s, r.adv))
	if err != nil {
		t.Fatalf("Options: %v", err)
	}
	opts.PollInterval = 20 * time.Millisecond
	run, err := consumer.NewRunner(ctx, consumer.NewRegistry(r.e, nil), opts)
	if err != nil {
		t.Fatalf("consumer.NewRunner: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- run.Run(ctx) }()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("the projection's runner: %v", err)
		}
	}
	t.Cleanup(stop)
	return stop
}
