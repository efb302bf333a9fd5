package conformance

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/tidemarkdb/tidemark/core/consumer"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/eventstore"
	"github.com/tidemarkdb/tidemark/core/hwm"
	"github.com/tidemarkdb/tidemark/core/topic"
	"github.com/tidemarkdb/tidemark/internal/testtime"
)

// consumerCaptureTests are the capture topic as a consumer source
// (consumer.Capture) and the cross-process wake-up of consumers.
func consumerCaptureTests() []Test {
	return []Test{
		{"consumer/capture_applied_once_in_key_order", testCaptureConsumerKeyOrder},
		{"consumer/capture_and_event_store_separate_checkpoints", testCaptureConsumerTwoSources},
		{"consumer/capture_missing_history_after_retention", testCaptureConsumerMissingHistory},
		{"consumer/capture_copy_restore_exact", testCaptureCopyRestore},
		{"consumer/woken_across_processes_by_notify", testConsumerWokenAcrossProcesses},
	}
}

// appliedLog records every apply of a test's handler, per source and key.
type appliedLog struct {
	mu     sync.Mutex
	times  map[string]map[int64]int // source → position → applies
	byKey  map[string][]int64       // source + "|" + key → positions in apply order
	values map[int64]topic.Record   // capture position → Value
}

func newAppliedLog() *appliedLog {
	return &appliedLog{times: map[string]map[int64]int{}, byKey: map[string][]int64{}, values: map[int64]topic.Record{}}
}

// events is the handler of the event store's messages.
func (l *appliedLog) events(_ context.Context, _ *sql.Tx, m consumer.Msg[eventstore.Recorded]) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.record(m.Source, m.Position, m.Key)
	return nil
}

// records is the handler of the capture topic's messages.
func (l *appliedLog) records(_ context.Context, _ *sql.Tx, m consumer.Msg[topic.Record]) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.record(m.Source, m.Position, m.Key)
	l.values[m.Position] = m.Value
	return nil
}

// record counts an apply; l.mu is held.
func (l *appliedLog) record(source string, position int64, key string) {
	if l.times[source] == nil {
		l.times[source] = map[int64]int{}
	}
	l.times[source][position]++
	l.byKey[source+"|"+key] = append(l.byKey[source+"|"+key], position)
}

// count is how many distinct positions of source were applied.
func (l *appliedLog) count(source string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.times[source])
}

// publishAndAdvance publishes msgs one publish each and moves the topic's
// mark past them; it returns their positions.
func publishAndAdvance(ctx context.Context, t T, tp *topic.Topic, adv *hwm.Advancer, msgs []topic.Message) []int64 {
	t.Helper()
	var pos []int64
	for _, m := range msgs {
		p, err := tp.Publish(ctx, m)
		if err != nil {
			t.Fatalf("Publish: %v", err)
		}
		pos = append(pos, p...)
	}
	advanceTopic(ctx, t, adv, tp, pos[len(pos)-1])
	return pos
}

// testCaptureConsumerKeyOrder: a runner over the capture topic applies
// every published message once, the messages of a key (and the keyless
// ones) in position order.
func testCaptureConsumerKeyOrder(t T, env *Env) {
	tp, adv, e := openCapture(t, env)
	ctx, cancel := testtime.Context(context.Background(), 2*time.Minute)
	defer cancel()
	keys := []string{"acc-1", "acc-2", "acc-3", "acc-4", ""}
	var msgs []topic.Message
	for i := range 30 {
		msgs = append(msgs, msg(keys[i%len(keys)], fmt.Sprintf(`{"i":%d}`, i)))
	}
	pos := publishAndAdvance(ctx, t, tp, adv, msgs)
	log := newAppliedLog()
	reg := consumer.NewRegistry(e, nil)
	r, err := consumer.NewRunner(ctx, reg, consumer.Options{Type: "projection", Name: "capture-order", Workers: 4, PageSize: 4,
		Routes: []consumer.Route{consumer.On(consumer.Capture(tp, nil), log.records)}})
	if err != nil {
		t.Fatal(err)
	}
	pollUntil(t, r, func() bool { return log.count(topic.CaptureTopic) == len(pos) })
	if c := mustConsumer(t, reg, r.Consumer().ID); c.State != consumer.Running {
		t.Fatalf("consumer %s (%s)", c.State, c.HaltReason)
	}
	log.mu.Lock()
	defer log.mu.Unlock()
	for i, p := range pos {
		if n := log.times[topic.CaptureTopic][p]; n != 1 {
			t.Errorf("position %d applied %d times, want once", p, n)
		}
		rec, ok := log.values[p]
		if !ok || rec.Key != msgs[i].Key || string(rec.Payload) != string(msgs[i].Payload) {
			t.Errorf("position %d: value %+v, want the record of message %d", p, log.values[p], i)
		}
	}
	for _, k := range keys {
		got := log.byKey[topic.CaptureTopic+"|"+k]
		var want []int64
		for i, p := range pos {
			if msgs[i].Key == k {
				want = append(want, p)
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("key %q applied in order %v, want %v", k, got, want)
		}
	}
}

// testCaptureConsumerTwoSources: one consumer over the event store and the
// capture topic keeps a checkpoint per source and partition; positions of
// one source never move the other's (both number from 1).
func testCaptureConsumerTwoSources(t T, env *Env) {
	tp, adv, e := openCapture(t, env)
	s := eventstore.New(e, nil)
	ctx, cancel := testtime.Context(context.Background(), 2*time.Minute)
	defer cancel()
	evPos := appendSpread(t, s, e, []string{"two-1", "two-2"}, 3)
	var msgs []topic.Message
	for i := range 20 {
		msgs = append(msgs, msg(fmt.Sprintf("m-%d", i%6), `{}`))
	}
	capPos := publishAndAdvance(ctx, t, tp, adv, msgs)
	log := newAppliedLog()
	reg := consumer.NewRegistry(e, nil)
	r, err := consumer.NewRunner(ctx, reg, consumer.Options{Type: "projection", Name: "two-sources",
		Routes: []consumer.Route{consumer.On(consumer.EventStore(s, nil), log.events), consumer.On(consumer.Capture(tp, nil), log.records)}})
	if err != nil {
		t.Fatal(err)
	}
	pollUntil(t, r, func() bool {
		return log.count(engine.EventStoreTopic) == len(evPos) && log.count(topic.CaptureTopic) == len(capPos)
	})
	last := map[string]map[int]int64{engine.EventStoreTopic: {}, topic.CaptureTopic: {}}
	evs, err := s.ReadAll(ctx, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs {
		last[engine.EventStoreTopic][ev.PartitionKey] = ev.GlobalPosition
	}
	for i, p := range capPos {
		last[topic.CaptureTopic][topic.PartitionKey(msgs[i].Key, e.Partitions)] = p
	}
	marks := map[string]int64{engine.EventStoreTopic: evPos[len(evPos)-1], topic.CaptureTopic: capPos[len(capPos)-1]}
	cps, err := reg.Checkpoints(ctx, r.Consumer().ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(cps) != 2*e.Partitions {
		t.Fatalf("%d checkpoint rows, want %d (one per source and partition)", len(cps), 2*e.Partitions)
	}
	seen := map[string]int{}
	for _, cp := range cps {
		seen[cp.Source]++
		want, ok := last[cp.Source][cp.Partition]
		if !ok {
			continue // a partition with nothing of this source: saved at most once a minute
		}
		if cp.Position < want || cp.Position > marks[cp.Source] {
			t.Errorf("checkpoint %s/%d at %d, want from %d (its last message) to %d (its source's mark)", cp.Source, cp.Partition, cp.Position, want, marks[cp.Source])
		}
	}
	if seen[engine.EventStoreTopic] != e.Partitions || seen[topic.CaptureTopic] != e.Partitions {
		t.Errorf("checkpoint rows per source %v, want %d each", seen, e.Partitions)
	}
}

// testCaptureConsumerMissingHistory: a partition read after a position
// below topic_start (retention ran with no consumer holding the topic) is
// the missing-history error, also when the read range is empty; at
// topic_start nothing is lost.
func testCaptureConsumerMissingHistory(t T, env *Env) {
	tp, adv, _ := openCapture(t, env)
	ctx, cancel := testtime.Context(context.Background(), 2*time.Minute)
	defer cancel()
	var msgs []topic.Message
	for i := range 6 {
		msgs = append(msgs, msg(fmt.Sprintf("h-%d", i), `{}`))
	}
	pos := publishAndAdvance(ctx, t, tp, adv, msgs)
	res, err := tp.Retain(ctx, topic.Retention{MaxMessages: 2})
	if err != nil || res.Start != pos[3] {
		t.Fatalf("Retain: %+v, %v; want start %d", res, err, pos[3])
	}
	src := consumer.Capture(tp, nil)
	mark := pos[5]
	for p := range src.Partitions() {
		for _, rng := range [][2]int64{{0, mark}, {pos[3] - 1, mark}, {0, 0}} {
			_, err := src.Read(ctx, p, rng[0], rng[1], 10)
			mh := expectErr[*topic.MissingHistoryError](t, err, fmt.Sprintf("Read(partition %d, (%d, %d]) below topic_start", p, rng[0], rng[1]))
			at, ok := consumer.IsMissingHistory(err)
			if !ok || at != res.Start || mh.TopicStart != res.Start || mh.Position != rng[0] || !errors.Is(err, topic.ErrMissingHistory) {
				t.Errorf("partition %d: IsMissingHistory = (%d, %v), error %+v; want history resuming after %d", p, at, ok, mh, res.Start)
			}
		}
	}
	got := 0
	for p := range src.Partitions() {
		msgs, err := src.Read(ctx, p, res.Start, mark, 10)
		if err != nil {
			t.Fatalf("Read(partition %d) at topic_start: %v", p, err)
		}
		got += len(msgs)
	}
	if got != 2 {
		t.Errorf("read %d messages at topic_start, want the 2 kept", got)
	}
	if _, ok := consumer.IsMissingHistory(fmt.Errorf("wrapped: %w", errors.New("other"))); ok {
		t.Errorf("IsMissingHistory recognised an unrelated error")
	}
}

// testCaptureCopyRestore: a record as the engine returns it survives
// Copy and Restore byte for byte: payload and metadata text (whitespace,
// escapes, non-ASCII), NULL metadata apart from a document, the key (none
// too), and occurred_at in UTC.
func testCaptureCopyRestore(t T, env *Env) {
	tp, adv, _ := openCapture(t, env)
	ctx, cancel := testtime.Context(context.Background(), 2*time.Minute)
	defer cancel()
	zone := time.FixedZone("UTC-03:30", -(3*3600 + 30*60))
	at := time.Date(2026, 10, 25, 2, 30, 1, 987654321, zone)
	payloads := []string{
		"{\n  \"spaced\" :   true ,\n\t\"n\": [1, 2.50, 3e10]\n}",
		`{"emoji":"😀","han":"漢字","esc":"\u00e9\n","quote":"\"\\"}`,
		`[]`,
	}
	metas := [][]byte{[]byte(`{"trace": "t-1"}`), nil, []byte(`{}`)}
	keys := []string{"acc-é", "", "k"}
	var msgs []topic.Message
	for i := range payloads {
		m := msg(keys[i], payloads[i])
		m.Metadata, m.Revision, m.OccurredAt = metas[i], i+1, at
		msgs = append(msgs, m)
	}
	pos := publishAndAdvance(ctx, t, tp, adv, msgs)
	src := consumer.Capture(tp, nil)
	var read []consumer.Message
	for p := range src.Partitions() {
		ms, err := src.Read(ctx, p, 0, pos[len(pos)-1], 10)
		if err != nil {
			t.Fatal(err)
		}
		read = append(read, ms...)
	}
	if len(read) != len(msgs) {
		t.Fatalf("read %d messages, want %d", len(read), len(msgs))
	}
	for _, m := range read {
		cp, err := src.Copy(m)
		if err != nil {
			t.Fatalf("Copy(%d): %v", m.Position, err)
		}
		back, err := src.Restore(m.Partition, m.Position, m.Key, cp)
		if err != nil {
			t.Fatalf("Restore(%d): %v", m.Position, err)
		}
		want, err := src.Record(m)
		if err != nil {
			t.Fatal(err)
		}
		got, err := src.Record(back)
		if err != nil {
			t.Fatal(err)
		}
		if back.Source != m.Source || back.Partition != m.Partition || back.Position != m.Position || back.Key != m.Key {
			t.Errorf("restored message %+v, want %+v", back, m)
		}
		if !bytes.Equal(got.Payload, want.Payload) || !bytes.Equal(got.Metadata, want.Metadata) || (got.Metadata == nil) != (want.Metadata == nil) ||
			got.ID != want.ID || got.Type != want.Type || got.Revision != want.Revision || got.Key != want.Key ||
			got.Position != want.Position || got.Partition != want.Partition {
			t.Errorf("position %d: restored %+v, want %+v (copy %s)", m.Position, got, want, cp)
		}
		if !got.OccurredAt.Equal(want.OccurredAt) || got.OccurredAt.Location() != time.UTC || want.OccurredAt.Location() != time.UTC {
			t.Errorf("position %d: occurred_at %v restored as %v, want equal and in UTC", m.Position, want.OccurredAt, got.OccurredAt)
		}
	}
	if _, err := src.Copy(consumer.Message{Position: 1, Value: "not a record"}); err == nil {
		t.Errorf("Copy of a message without a topic.Record succeeded")
	}
}
