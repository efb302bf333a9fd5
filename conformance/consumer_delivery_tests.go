package conformance

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tidemarkdb/tidemark/core/consumer"
	"github.com/tidemarkdb/tidemark/core/eventstore"
)

func deliveryTests() []Test {
	return []Test{
		{"consumer/delivery/failed_retried_when_due_waiting_in_order", testDeliveryFailedRetried},
		{"consumer/delivery/budget_survives_restart_and_instance_move", testDeliveryBudgetMoves},
		{"consumer/delivery/budget_moves_to_another_process", testDeliveryBudgetOtherProcess},
		{"consumer/delivery/transient_errors_spend_no_budget", testDeliveryTransient},
		{"consumer/delivery/error_policies", testDeliveryPolicies},
		{"consumer/delivery/failure_reason_cut_copy_byte_exact", testDeliveryReasonAndCopy},
		{"consumer/delivery/skip_honoured_by_second_instance_and_cleaned", testDeliverySkips},
		{"consumer/delivery/missing_history_marks_and_halts", testDeliveryMissingHistory},
	}
}

// testDeliveryFailedRetried: a failing message becomes FAILED with its
// count and next_retry_at, is retried only once the clock reaches it, and
// its key's later messages wait (WAITING) while another key flows; once it
// applies, its row goes and the waiting ones apply in order. Both with the
// handler in the checkpoint's transaction and after it.
func testDeliveryFailedRetried(t T, env *Env) {
	g := newDeliveryRig(t, env)
	type ids struct{ a1, a2, b1, a3, b2 int64 }
	var p ids
	for _, tx := range []bool{false, true} {
		g.reset()
		a, b := fmt.Sprintf("A-%v", tx), fmt.Sprintf("B-%v", tx)
		ka, kb := "test.Account/"+a, "test.Account/"+b
		p = ids{g.add(a, `{}`), g.add(a, `{}`), g.add(b, `{}`), g.add(a, `{}`), g.add(b, `{}`)}
		g.failing(p.a1, 2)
		r := g.runner(fmt.Sprintf("retried-%v", tx), tx, exact(5), "")
		id := r.Consumer().ID
		t0 := g.clock.Now()
		g.poll(r)
		g.wantRow(id, p.a1, consumer.StatusFailed, 1, t0.Add(time.Second))
		g.wantRow(id, p.a2, consumer.StatusWaiting, 0, time.Time{})
		g.wantRow(id, p.a3, consumer.StatusWaiting, 0, time.Time{})
		if got := g.order(kb); !slices.Equal(got, []int64{p.b1, p.b2}) {
			t.Errorf("tx %v: key B applied %v while A waited, want %v", tx, got, []int64{p.b1, p.b2})
		}
		if got := g.order(ka); len(got) != 0 {
			t.Errorf("tx %v: key A applied %v behind its failed head", tx, got)
		}
		g.poll(r) // not due yet: the clock has not moved
		if n := g.triesOf(p.a1); n != 1 {
			t.Errorf("tx %v: head tried %d times before its next_retry_at, want 1", tx, n)
		}
		g.clock.Add(time.Second)
		g.poll(r)
		g.wantRow(id, p.a1, consumer.StatusFailed, 2, t0.Add(3*time.Second)) // backoff 2 s after the 2nd failure
		g.clock.Add(2 * time.Second)
		g.poll(r)
		for _, pos := range []int64{p.a1, p.a2, p.a3} {
			g.wantRow(id, pos, "", 0, time.Time{})
		}
		if got := g.order(ka); !slices.Equal(got, []int64{p.a1, p.a2, p.a3}) {
			t.Errorf("tx %v: key A applied %v after its head succeeded, want %v", tx, got, []int64{p.a1, p.a2, p.a3})
		}
		g.covered(id)
		if mustConsumer(t, g.reg, id).State != consumer.Running {
			t.Errorf("tx %v: consumer not running", tx)
		}
	}
	// The Transactional consumer wrote every apply in its transaction:
	// each position once, the failed attempts rolled back.
	for _, pos := range []int64{p.a1, p.a2, p.b1, p.a3, p.b2} {
		if n := appliedCounts(t, env)[pos]; n != 1 {
			t.Errorf("transactional: position %d written %d times, want 1", pos, n)
		}
	}
	if g.metrics.retried[false] < 2 || g.metrics.applied == 0 || g.metrics.lagged == 0 {
		t.Errorf("metrics: retried %v, applied %d, lag reports %d", g.metrics.retried, g.metrics.applied, g.metrics.lagged)
	}
}

// testDeliveryBudgetMoves: the count and next_retry_at live in the table,
// so a new runner on a new engine (a restart) and a second runner of the
// same consumer (another instance) go on with the same budget.
func testDeliveryBudgetMoves(t T, env *Env) {
	g := newDeliveryRig(t, env)
	a1 := g.add("A", `{}`)
	g.failing(a1, -1)
	r1 := g.runner("moves", false, exact(4), consumer.PolicyHalt)
	id := r1.Consumer().ID
	t0 := g.clock.Now()
	g.poll(r1)
	g.wantRow(id, a1, consumer.StatusFailed, 1, t0.Add(time.Second))
	// A restart: a new engine, registry and runner.
	e2 := openEngine(t, env, defaultConfig(env))
	s2 := eventstore.New(e2, nil)
	r2 := g.runnerOn(consumer.NewRegistry(e2, g.clock.Now), s2, "moves", false, exact(4), consumer.PolicyHalt)
	g.poll(r2)
	if n := g.triesOf(a1); n != 1 {
		t.Errorf("the restarted runner tried it before its next_retry_at: %d tries", n)
	}
	g.clock.Add(time.Second)
	g.poll(r2)
	g.wantRow(id, a1, consumer.StatusFailed, 2, t0.Add(3*time.Second))
	// Another instance of the same consumer takes the next attempt.
	r3 := g.runner("moves", false, exact(4), consumer.PolicyHalt)
	g.poll(r3)
	if n := g.triesOf(a1); n != 2 {
		t.Errorf("the second instance tried it before its next_retry_at: %d tries", n)
	}
	g.clock.Add(2 * time.Second)
	g.poll(r3)
	g.wantRow(id, a1, consumer.StatusFailed, 3, t0.Add(7*time.Second))
	g.clock.Add(4 * time.Second)
	g.poll(r2)
	g.wantRow(id, a1, consumer.StatusHalted, 4, time.Time{})
	c := mustConsumer(t, g.reg, id)
	if c.State != consumer.Halted || c.HaltReason != consumer.ApplyError {
		t.Errorf("consumer %s (%s) after the budget was spent, want HALTED (APPLY_ERROR)", c.State, c.HaltReason)
	}
	if n := g.triesOf(a1); n != 4 {
		t.Errorf("tried %d times across the instances, want the budget of 4", n)
	}
}

// testDeliveryPolicies: what a spent budget becomes under each policy.
func testDeliveryPolicies(t T, env *Env) {
	g := newDeliveryRig(t, env)
	for _, policy := range []consumer.ErrorPolicy{consumer.PolicyHalt, consumer.PolicyDeadLetterKey, consumer.PolicyDeadLetter} {
		g.reset()
		a, b := "A-"+string(policy), "B-"+string(policy)
		ka, kb := "test.Account/"+a, "test.Account/"+b
		a1, a2, b1 := g.add(a, `{}`), g.add(a, `{}`), g.add(b, `{}`)
		g.failing(a1, -1)
		r := g.runner("policy-"+string(policy), false, exact(2), policy)
		id := r.Consumer().ID
		g.poll(r)
		g.clock.Add(time.Second)
		g.poll(r) // the second failure spends the budget of 2
		row := g.rows(id)[a1]
		if row.FailureCount != 2 || !strings.Contains(row.FailureReason, "poison") {
			t.Errorf("%s: dead row count %d reason %q, want 2 and the handler's error", policy, row.FailureCount, row.FailureReason)
		}
		a3, b2 := g.add(a, `{}`), g.add(b, `{}`)
		g.poll(r)
		c := mustConsumer(t, g.reg, id)
		switch policy {
		case consumer.PolicyHalt:
			g.wantRow(id, a1, consumer.StatusHalted, 2, time.Time{})
			g.wantRow(id, a2, consumer.StatusWaiting, 0, time.Time{})
			if c.State != consumer.Halted || c.HaltReason != consumer.ApplyError {
				t.Errorf("HALT: consumer %s (%s), want HALTED APPLY_ERROR", c.State, c.HaltReason)
			}
			if got := g.order(kb); !slices.Equal(got, []int64{b1}) {
				t.Errorf("HALT: key B applied %v after the halt, want only %d", got, b1)
			}
		case consumer.PolicyDeadLetterKey:
			g.wantRow(id, a1, consumer.StatusDeadLetterKey, 2, time.Time{})
			g.wantRow(id, a2, consumer.StatusDeadLetterKey, 0, time.Time{})
			g.wantRow(id, a3, consumer.StatusDeadLetterKey, 0, time.Time{})
			if f := g.rows(id)[a3]; f.FailureReason != "" {
				t.Errorf("DEAD_LETTER_KEY follower has reason %q, want none", f.FailureReason)
			}
			if c.State != consumer.Running || !slices.Equal(g.order(kb), []int64{b1, b2}) || len(g.order(ka)) != 0 {
				t.Errorf("DEAD_LETTER_KEY: consumer %s, key B applied %v, key A %v; want running, [%d %d], none", c.State, g.order(kb), g.order(ka), b1, b2)
			}
		case consumer.PolicyDeadLetter:
			g.wantRow(id, a1, consumer.StatusDeadLetter, 2, time.Time{})
			if c.State != consumer.Running || !slices.Equal(g.order(ka), []int64{a2, a3}) || !slices.Equal(g.order(kb), []int64{b1, b2}) {
				t.Errorf("DEAD_LETTER: consumer %s, key A applied %v (want [%d %d]), key B %v", c.State, g.order(ka), a2, a3, g.order(kb))
			}
		}
		dead := map[consumer.ErrorPolicy]consumer.DeliveryStatus{consumer.PolicyHalt: consumer.StatusHalted,
			consumer.PolicyDeadLetterKey: consumer.StatusDeadLetterKey, consumer.PolicyDeadLetter: consumer.StatusDeadLetter}[policy]
		if g.metrics.deadLettered[dead] != 1 {
			t.Errorf("%s: dead-letter metrics %v", policy, g.metrics.deadLettered)
		}
	}
	if g.metrics.halted[consumer.ApplyError] != 1 {
		t.Errorf("halt metrics %v, want one APPLY_ERROR", g.metrics.halted)
	}
}

// testDeliveryReasonAndCopy: failure_reason keeps the error's type and
// message cut to 1,000 characters without splitting one; the retry applies
// the message copy, which restores the event byte for byte.
func testDeliveryReasonAndCopy(t T, env *Env) {
	g := newDeliveryRig(t, env)
	payload := `{ "s" : "naïve – 日本語 😀 \"q\" \\",  "n":[1, 2.50 ,3e2] }`
	a1 := g.add("A", payload)
	g.failing(a1, 1)
	g.reason[a1] = errors.New(strings.Repeat("日", 1500))
	r := g.runner("copy", false, exact(3), "")
	id := r.Consumer().ID
	g.poll(r)
	reason := g.rows(id)[a1].FailureReason
	if n := utf8.RuneCountInString(reason); n != consumer.MaxFailureReason || !utf8.ValidString(reason) ||
		!strings.HasPrefix(reason, "*errors.errorString: 日") || !strings.HasSuffix(reason, "日") {
		t.Errorf("failure_reason of %d characters (valid UTF-8 %v) starting %q, want %d whole characters, \"<type>: <message>\"",
			n, utf8.ValidString(reason), reason[:min(len(reason), 30)], consumer.MaxFailureReason)
	}
	g.clock.Add(time.Second)
	g.poll(r)
	g.wantRow(id, a1, "", 0, time.Time{})
	evs, err := g.s.ReadAll(context.Background(), a1-1, 1)
	if err != nil || len(evs) != 1 {
		t.Fatalf("reading the event back: %v", err)
	}
	want := evs[0]
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.applied) != 1 {
		t.Fatalf("%d applies, want the retry's one", len(g.applied))
	}
	got := g.applied[0].Value
	if !bytes.Equal(got.Payload, []byte(payload)) || !bytes.Equal(got.Payload, want.Payload) || !bytes.Equal(got.Metadata, want.Metadata) ||
		got.ID != want.ID || got.AggregateID != want.AggregateID || got.AggregateType != want.AggregateType || got.Type != want.Type ||
		got.SequenceNo != want.SequenceNo || got.Revision != want.Revision || got.GlobalPosition != want.GlobalPosition ||
		got.PartitionKey != want.PartitionKey || !got.OccurredAt.Equal(want.OccurredAt) {
		t.Errorf("the copy restored %+v, the store holds %+v", got, want)
	}
	if m := g.applied[0]; m.Position != a1 || m.Key != "test.Account/A" || m.Partition != want.PartitionKey {
		t.Errorf("the retried message is %s/%d@%d key %q", m.Source, m.Partition, m.Position, m.Key)
	}
}

// testDeliveryTransient: a transient error (the database undid the
// attempt) retries at once and spends no budget, for a new message and for
// a retried head alike.
func testDeliveryTransient(t T, env *Env) {
	g := newDeliveryRig(t, env)
	a1, b1 := g.add("A", `{}`), g.add("B", `{}`)
	g.mu.Lock()
	g.flaky[a1], g.flaky[b1] = 2, 1
	g.mu.Unlock()
	g.failing(b1, 1) // then a real failure: FAILED count 1
	r := g.runner("transient", true, exact(2), "")
	id := r.Consumer().ID
	g.poll(r)
	g.wantRow(id, a1, "", 0, time.Time{})
	g.wantRow(id, b1, consumer.StatusFailed, 1, g.clock.Now().Add(time.Second))
	if g.appliedOf(a1) != 1 || g.triesOf(a1) != 3 {
		t.Errorf("transiently failing message applied %d times after %d tries, want 1 after 3", g.appliedOf(a1), g.triesOf(a1))
	}
	g.mu.Lock()
	g.flaky[b1] = 3
	g.mu.Unlock()
	g.clock.Add(time.Second)
	g.poll(r) // the head's retry: three transient failures, then applied
	g.wantRow(id, b1, "", 0, time.Time{})
	if g.appliedOf(b1) != 1 || mustConsumer(t, g.reg, id).State != consumer.Running {
		t.Errorf("head applied %d times; consumer %s (a budget of 2 would have been spent by a counted failure)", g.appliedOf(b1), mustConsumer(t, g.reg, id).State)
	}
	if g.metrics.retried[true] != 6 {
		t.Errorf("transient retries reported %d, want 6", g.metrics.retried[true])
	}
}
