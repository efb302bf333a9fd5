package conformance

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tidemarkdb/tidemark/core/hwm"
	"github.com/tidemarkdb/tidemark/core/sqlerr"
	"github.com/tidemarkdb/tidemark/core/topic"
	"github.com/tidemarkdb/tidemark/internal/sqlcount"
	"github.com/tidemarkdb/tidemark/internal/testtime"
)

// testCaptureFollowTransientRetried injects transient errors, classified
// by the dialect's rules, into the topic Follow's page reads: before the
// first page's query, after two rows of the second read, and before the
// last row of a full page. Follow retries each from the last message it
// delivered, as the event store's Follow does: every position comes
// exactly once, in order, each retry is reported to OnRetry, and the
// handler's error then ends Follow unchanged.
func testCaptureFollowTransientRetried(t T, env *Env) {
	ctx, cancel := testtime.Context(context.Background(), 2*time.Minute)
	defer cancel()
	const pageSize, n = 5, 23
	var armed atomic.Bool
	var mu sync.Mutex
	reads, injected := 0, 0
	var fault error
	records := ""
	counts := &sqlcount.Counts{Fault: func(_ context.Context, q string, row int) error {
		if !armed.Load() || !strings.Contains(strings.ToLower(q), records) {
			return nil
		}
		mu.Lock()
		defer mu.Unlock()
		if row < 0 {
			reads++
		}
		if row < 0 && reads == 1 || row == 2 && reads == 2 || row == pageSize-1 && reads == 4 {
			injected++
			return fault
		}
		return nil
	}}
	e := countedEngine(t, env, defaultConfig(env), counts)
	records = strings.ToLower(e.Names.Shared["event_capture_records_table"])
	if records == "" {
		t.Fatalf("the engine names no capture records table")
	}
	if fault = transientFault(e, env.Catalogue.Errors); fault == nil {
		skipf(t, "the dialect has no transient error rule by SQLSTATE or vendor code to inject")
	}
	tp, err := topic.New(ctx, e)
	if err != nil {
		t.Fatalf("topic.New: %v", err)
	}
	adv := tp.Advancer(hwm.Options{})
	start := advanceTopic(ctx, t, adv, tp, 0)
	msgs := make([]topic.Message, n)
	for i := range msgs {
		msgs[i] = topic.Message{Key: "k", Type: "test.M", Payload: []byte(fmt.Sprintf(`{"i":%d}`, i))}
	}
	pos, err := tp.Publish(ctx, msgs...)
	if err != nil {
		t.Fatalf("publish: %v", err)
	}
	advanceTopic(ctx, t, adv, tp, pos[n-1])
	armed.Store(true)
	errDone := errors.New("all seen")
	var seen []int64
	var retries []error
	err = tp.Follow(ctx, start, topic.FollowOptions{PageSize: pageSize,
		OnRetry: func(_ int, err error) { retries = append(retries, err) }}, func(r topic.Record) error {
		seen = append(seen, r.Position)
		if len(seen) == n {
			return errDone
		}
		return nil
	})
	if err != errDone { //nolint:errorlint // the handler's error must come back as it was returned
		t.Fatalf("Follow returned %v, want the handler's error after every message (delivered %v)", err, seen)
	}
	if fmt.Sprint(seen) != fmt.Sprint(pos) {
		t.Errorf("Follow delivered %v, want each of %v once, in order", seen, pos)
	}
	mu.Lock()
	defer mu.Unlock()
	if injected != 3 || len(retries) != 3 {
		t.Errorf("%d faults injected, %d retries reported (%v), want 3 of each", injected, len(retries), retries)
	}
	for _, err := range retries {
		if !sqlerr.IsTransient(err) {
			t.Errorf("retried %v, which is not classified transient", err)
		}
	}
}
