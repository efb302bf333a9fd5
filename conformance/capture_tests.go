package conformance

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/hwm"
	"github.com/tidemarkdb/tidemark/core/topic"
	"github.com/tidemarkdb/tidemark/internal/testtime"
)

// captureTests are the capture topic's behaviours (core/topic): publish,
// read up to the topic's own mark, retention held by the slowest
// checkpoint, missing history below topic_start.
func captureTests() []Test {
	return []Test{
		{"capture/publish_own_transaction", testCapturePublishOwn},
		{"capture/publish_caller_transaction", testCapturePublishCallerTx},
		{"capture/concurrent_publishers_tail_read", testCaptureConcurrent},
		{"capture/key_refusals_before_sql", testCaptureKeyRefusals},
		{"capture/keys_exact", testCaptureKeysExact},
		{"capture/partition_key", testCapturePartitionKey},
		{"capture/occurred_at_utc", testCaptureOccurredAtUTC},
		{"capture/retention_by_age", testCaptureRetentionByAge},
		{"capture/retention_by_size", testCaptureRetentionBySize},
		{"capture/retention_respects_slowest_checkpoint", testCaptureRetentionCheckpoints},
		{"capture/missing_history_below_topic_start", testCaptureMissingHistory},
		{"capture/follow_transient_retried", testCaptureFollowTransientRetried},
		{"capture/publish_batch_multi_row", testCapturePublishBatchStatements},
	}
}

// openCapture opens the suite's engine and the capture topic with an
// advancer on the topic's own mark row (cycled by the tests).
func openCapture(t T, env *Env) (*topic.Topic, *hwm.Advancer, *engine.Engine) {
	t.Helper()
	e := openEngine(t, env, defaultConfig(env))
	ctx, cancel := testtime.Context(context.Background(), time.Minute)
	defer cancel()
	tp, err := topic.New(ctx, e)
	if err != nil {
		t.Fatalf("topic.New: %v", err)
	}
	return tp, tp.Advancer(hwm.Options{PollInterval: 10 * time.Millisecond}), e
}

// advanceTopic cycles a until the topic's mark reaches want (a guard
// against hanging, not a timed assertion).
func advanceTopic(ctx context.Context, t T, a *hwm.Advancer, tp *topic.Topic, want int64) int64 {
	t.Helper()
	deadline := testtime.Deadline(30 * time.Second)
	for {
		if _, err := a.Cycle(ctx); err != nil {
			t.Fatalf("advancing the capture topic: %v", err)
		}
		m, err := tp.Mark(ctx)
		if err != nil {
			t.Fatalf("reading the capture mark: %v", err)
		}
		if m >= want {
			return m
		}
		if time.Now().After(deadline) {
			t.Fatalf("capture mark stuck at %d, want %d", m, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func msg(key, payload string) topic.Message {
	return topic.Message{Key: key, Type: "test.Captured", Payload: []byte(payload)}
}

func readAllTopic(ctx context.Context, t T, tp *topic.Topic, after int64) []topic.Record {
	t.Helper()
	var out []topic.Record
	for {
		page, err := tp.ReadTopic(ctx, after, 100)
		if err != nil {
			t.Fatalf("ReadTopic(%d): %v", after, err)
		}
		if len(page) == 0 {
			return out
		}
		out = append(out, page...)
		after = page[len(page)-1].Position
	}
}

func testCapturePublishOwn(t T, env *Env) {
	tp, adv, e := openCapture(t, env)
	ctx, cancel := testtime.Context(context.Background(), 2*time.Minute)
	defer cancel()
	meta := []byte(`{"trace":"t-1"}`)
	m1 := msg("acc-1", `{"n":1}`)
	m1.Metadata, m1.Revision = meta, 2
	pos, err := tp.Publish(ctx, m1, msg("acc-2", `{"n":2}`), msg("", `{"n":3}`))
	if err != nil {
		t.Fatalf("Publish: %v", err)
	}
	if len(pos) != 3 || pos[1] <= pos[0] || pos[2] <= pos[1] {
		t.Fatalf("positions %v, want 3 ascending", pos)
	}
	// Nothing is readable before the topic's mark passes it.
	if got, err := tp.ReadTopic(ctx, 0, 10); err != nil || len(got) != 0 {
		t.Fatalf("before the mark moved: %d records, %v; want none", len(got), err)
	}
	advanceTopic(ctx, t, adv, tp, pos[2])
	got := readAllTopic(ctx, t, tp, 0)
	if len(got) != 3 {
		t.Fatalf("read %d records, want 3", len(got))
	}
	for i, r := range got {
		if r.Position != pos[i] {
			t.Errorf("record %d at %d, want %d", i, r.Position, pos[i])
		}
		if _, err := uuid.Parse(r.ID); err != nil || len(r.ID) != 36 {
			t.Errorf("record %d id %q is not a canonical UUID", i, r.ID)
		}
	}
	if got[0].Key != "acc-1" || string(got[0].Payload) != `{"n":1}` || string(got[0].Metadata) != string(meta) || got[0].Revision != 2 || got[0].Type != "test.Captured" {
		t.Errorf("record 0 = %+v", got[0])
	}
	if got[2].Key != "" || got[2].Metadata != nil {
		t.Errorf("keyless record: key %q, metadata %q; want empty, nil", got[2].Key, got[2].Metadata)
	}
	// The topic's mark is its own: the event store's did not move.
	if m, err := (eventStoreMark{e}).get(ctx); err != nil || m != 0 {
		t.Errorf("event store mark %d (%v), want 0: the capture topic has its own row", m, err)
	}
}

type eventStoreMark struct{ e *engine.Engine }

func (m eventStoreMark) get(ctx context.Context) (int64, error) {
	r, err := m.e.ReadMarkRow(ctx, m.e.DB, engine.EventStoreTopic)
	return r.Mark, err
}

func testCapturePublishCallerTx(t T, env *Env) {
	tp, adv, e := openCapture(t, env)
	ctx, cancel := testtime.Context(context.Background(), 2*time.Minute)
	defer cancel()
	first, err := tp.Publish(ctx, msg("k", `{"n":0}`))
	if err != nil {
		t.Fatalf("Publish: %v", err)
	}
	// Rolled back: never visible.
	tx, err := e.BeginTx(ctx, engine.OpAppend)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tp.PublishTx(ctx, tx, msg("k", `{"rolled":"back"}`)); err != nil {
		_ = tx.Rollback()
		t.Fatalf("PublishTx: %v", err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	// Committed with the caller's transaction.
	tx, err = e.BeginTx(ctx, engine.OpAppend)
	if err != nil {
		t.Fatal(err)
	}
	pos, err := tp.PublishTx(ctx, tx, msg("k", `{"n":1}`), msg("k", `{"n":2}`))
	if err != nil {
		_ = tx.Rollback()
		t.Fatalf("PublishTx: %v", err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	advanceTopic(ctx, t, adv, tp, pos[1])
	got := readAllTopic(ctx, t, tp, 0)
	var payloads []string
	for _, r := range got {
		payloads = append(payloads, string(r.Payload))
	}
	if strings.Join(payloads, " ") != `{"n":0} {"n":1} {"n":2}` {
		t.Fatalf("read %v; want the committed messages only, in order", payloads)
	}
	if isCounter(env) {
		// The counter row is restored by the rollback: no gap.
		if pos[0] != first[0]+1 || pos[1] != first[0]+2 {
			t.Errorf("positions %d then %v: a counter topic is gapless after a rollback", first[0], pos)
		}
	}
}

// testCaptureConcurrent runs 6 publishers (own and caller's transactions,
// some rolled back) against one tail reader (Follow): every committed
// message once, in position order, no rolled-back one.
func testCaptureConcurrent(t T, env *Env) {
	tp, adv, e := openCapture(t, env)
	ctx, cancel := testtime.Context(context.Background(), 3*time.Minute)
	defer cancel()
	advCtx, stopAdv := context.WithCancel(ctx)
	advDone := make(chan struct{})
	go func() { defer close(advDone); _ = adv.Run(advCtx) }()
	defer func() { stopAdv(); <-advDone }()

	const writers, perWriter = 6, 20
	var mu sync.Mutex
	committed, rolledBack := map[string]bool{}, map[string]bool{}
	var last int64
	var wg sync.WaitGroup
	var writeErr error
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perWriter {
				p := fmt.Sprintf(`{"w":%d,"i":%d}`, w, i)
				m := msg(fmt.Sprintf("key-%d", (w+i)%5), p)
				var pos []int64
				var err error
				rollback := false
				if i%3 == 0 {
					pos, err = tp.Publish(ctx, m)
				} else {
					rollback = i%4 == 1
					pos, err = publishInTx(ctx, e, tp, m, rollback)
				}
				mu.Lock()
				if err != nil && writeErr == nil {
					writeErr = err
				}
				if err == nil {
					if rollback {
						rolledBack[p] = true
					} else {
						committed[p] = true
						last = max(last, pos[0])
					}
				}
				mu.Unlock()
			}
		}()
	}
	seen := map[string]bool{}
	var prev int64
	followErr := make(chan error, 1)
	followCtx, stopFollow := context.WithCancel(ctx)
	defer stopFollow()
	go func() {
		followErr <- tp.Follow(followCtx, 0, topic.FollowOptions{Waker: adv, PollInterval: 20 * time.Millisecond}, func(r topic.Record) error {
			mu.Lock()
			defer mu.Unlock()
			if r.Position <= prev {
				return fmt.Errorf("position %d after %d: not in order", r.Position, prev)
			}
			prev = r.Position
			p := string(r.Payload)
			if seen[p] {
				return fmt.Errorf("%s delivered twice", p)
			}
			seen[p] = true
			return nil
		})
	}()
	wg.Wait()
	if writeErr != nil {
		t.Fatalf("publishing: %v", writeErr)
	}
	// Wait (bounded by ctx) until the follower has passed the last commit.
	for {
		mu.Lock()
		reached := prev >= last
		mu.Unlock()
		if reached {
			break
		}
		select {
		case err := <-followErr:
			t.Fatalf("Follow: %v", err)
		case <-ctx.Done():
			t.Fatalf("follower stopped at %d, last commit at %d", prev, last)
		case <-time.After(10 * time.Millisecond):
		}
	}
	stopFollow()
	if err := <-followErr; !errors.Is(err, context.Canceled) {
		t.Fatalf("Follow: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	for p := range rolledBack {
		if seen[p] {
			t.Errorf("rolled-back %s was delivered", p)
		}
	}
	for p := range committed {
		if !seen[p] {
			t.Errorf("committed %s was not delivered", p)
		}
	}
}

func publishInTx(ctx context.Context, e *engine.Engine, tp *topic.Topic, m topic.Message, rollback bool) ([]int64, error) {
	tx, err := e.BeginTx(ctx, engine.OpAppend)
	if err != nil {
		return nil, err
	}
	pos, err := tp.PublishTx(ctx, tx, m)
	if err != nil || rollback {
		_ = tx.Rollback()
		return pos, err
	}
	return pos, tx.Commit()
}
