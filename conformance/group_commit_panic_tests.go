package conformance

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/tidemarkdb/tidemark/core/eventstore"
	"github.com/tidemarkdb/tidemark/internal/testtime"
)

// panicNudger holds its first nudge like gate, and panics on its second:
// the nudge of the batch that the queued callers form once the gate opens.
type panicNudger struct {
	*gate
	calls atomic.Int32
}

func (p *panicNudger) Nudge() {
	switch p.calls.Add(1) {
	case 1:
		p.gate.Nudge()
	case 2:
		panic("nudger boom")
	}
}

// testGroupCommitPanicAnswersCallers: a panic in a batch (here the
// caller's own Nudger, run by the leader after the batch's commit) answers
// every caller of the batch with eventstore.ErrGroupCommitPanic carrying
// the panic value, instead of leaving the callers behind the leader queued
// for ever; the lead passes on and the next append commits. The batch had
// committed, so each caller's event is stored once (the error says the
// outcome is unknown, and it was a commit).
func testGroupCommitPanicAnswersCallers(t T, env *Env) {
	e := openEngine(t, env, defaultConfig(env))
	pn := &panicNudger{gate: newGate()}
	s := eventstore.New(e, pn, eventstore.WithGroupCommit(true))
	ctx := context.Background()
	go func() { _, _ = s.Append(ctx, one("gp-leader", eventstore.NoStream, `{}`)) }()
	waitFor(t, "the leader's nudge", func() bool {
		select {
		case <-pn.entered:
			return true
		default:
			return false
		}
	})
	const callers = 3
	errs := make([]error, callers)
	done := make([]chan struct{}, callers)
	for i := range callers {
		done[i] = make(chan struct{})
		go func() {
			defer close(done[i])
			defer func() {
				if v := recover(); v != nil {
					errs[i] = fmt.Errorf("Append panicked: %v", v) // what the leader did before the recover
				}
			}()
			_, errs[i] = s.Append(ctx, one(fmt.Sprintf("gp-%d", i), eventstore.NoStream, `{}`))
		}()
		waitFor(t, fmt.Sprintf("caller %d queued", i), func() bool { return s.GroupCommitStats().Queued == i+1 })
	}
	close(pn.release)
	const guard = 60 * time.Second // a hang guard, not a timing assertion
	for i := range callers {
		select {
		case <-done[i]:
		case <-testtime.After(guard):
			t.Fatalf("caller %d of the panicking batch got no answer in %s", i, guard)
		}
	}
	for i, err := range errs {
		pe := expectErr[*eventstore.GroupCommitPanicError](t, err, fmt.Sprintf("caller %d", i))
		if !errors.Is(err, eventstore.ErrGroupCommitPanic) || pe.Value != "nudger boom" {
			t.Errorf("caller %d: %v (value %v), want ErrGroupCommitPanic with the panic value", i, err, pe.Value)
		}
		got, err := s.Load(ctx, "bank.Account", fmt.Sprintf("gp-%d", i), -1)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 {
			t.Errorf("caller %d: %d events stored, want 1 (the batch committed before the nudge)", i, len(got))
		}
	}
	after := make(chan error, 1)
	go func() { _, err := s.Append(ctx, one("gp-after", eventstore.NoStream, `{}`)); after <- err }()
	select {
	case err := <-after:
		if err != nil {
			t.Fatalf("an append after the panic: %v", err)
		}
	case <-testtime.After(guard):
		t.Fatalf("an append after the panic got no answer in %s: the lead was not passed on", guard)
	}
}
