package conformance

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/hwm"
	"github.com/tidemarkdb/tidemark/core/topic"
	"github.com/tidemarkdb/tidemark/internal/testtime"
)

// rmTopicTests are the read-model topics (core/topic's ReadModelTopic):
// many topics in READ_MODEL_CAPTURE_RECORDS, each read up to its mark.
func rmTopicTests() []Test {
	return []Test{
		{"rmtopic/publish_read_two_topics", testRMTopicTwoTopics},
		{"rmtopic/rollback_leaves_nothing", testRMTopicRollback},
		{"rmtopic/follow_per_topic", testRMTopicFollow},
		{"rmtopic/consumer_applies_once", testRMTopicConsumer},
		{"rmtopic/sequence_recreated_moved_past", testRMTopicSequenceRecreated},
		{"rmtopic/read_by_id_and_latest", testRMTopicByIDLatest},
		{"rmtopic/bad_input_before_sql", testRMTopicBadInput},
		{"rmtopic/compaction_keeps_latest_per_key", testRMTopicCompaction},
		{"rmtopic/tombstone_retention_held_by_consumers", testRMTopicTombstoneRetention},
		{"rmtopic/compactor_runs_scheduled", testRMTopicCompactorScheduled},
		{"rmtopic/concurrent_compactions_safe", testRMTopicConcurrentCompactions},
	}
}

// rmRig is an engine with read-model topics and, where one sequence
// numbers them all, the shared mark's advancer (nil on counter engines).
type rmRig struct {
	e   *engine.Engine
	adv *hwm.Advancer
}

func openRMRig(t T, env *Env) *rmRig {
	t.Helper()
	e := openEngine(t, env, defaultConfig(env))
	return &rmRig{e: e, adv: topic.ReadModelAdvancer(e, hwm.Options{PollInterval: 10 * time.Millisecond})}
}

func (r *rmRig) open(ctx context.Context, t T, name string) *topic.ReadModelTopic {
	t.Helper()
	tp, err := topic.OpenReadModel(ctx, r.e, name)
	if err != nil {
		t.Fatalf("OpenReadModel(%s): %v", name, err)
	}
	return tp
}

// advance moves tp's mark to want: cycles the shared advancer, or checks
// that the committed counter already is there (a bound against hanging,
// not a timed assertion).
func (r *rmRig) advance(ctx context.Context, t T, tp *topic.ReadModelTopic, want int64) {
	t.Helper()
	deadline := testtime.Deadline(30 * time.Second)
	for {
		if r.adv != nil {
			if _, err := r.adv.Cycle(ctx); err != nil {
				t.Fatalf("advancing the read-model mark: %v", err)
			}
		}
		m, err := tp.Mark(ctx)
		if err != nil {
			t.Fatalf("Mark: %v", err)
		}
		if m >= want {
			return
		}
		if r.adv == nil || time.Now().After(deadline) {
			t.Fatalf("mark of %s at %d, want %d", tp.Name(), m, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// publish publishes msgs on tp in a transaction of its own and commits.
func (r *rmRig) publish(ctx context.Context, t T, tp *topic.ReadModelTopic, msgs ...topic.ReadModelMessage) []topic.Published {
	t.Helper()
	tx, err := r.e.DB.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	out, err := tp.PublishTx(ctx, tx, msgs...)
	if err != nil {
		_ = tx.Rollback()
		t.Fatalf("PublishTx(%s): %v", tp.Name(), err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatalf("commit: %v", err)
	}
	return out
}

func rmMsg(key, payload string) topic.ReadModelMessage {
	return topic.ReadModelMessage{Key: key, Type: "test.Summary", Payload: []byte(payload), CascadeDepth: 1}
}

func readAllRM(ctx context.Context, t T, tp *topic.ReadModelTopic) []topic.ReadModelRecord {
	t.Helper()
	var out []topic.ReadModelRecord
	after := int64(0)
	for {
		page, err := tp.ReadTopic(ctx, after, 3)
		if err != nil {
			t.Fatalf("ReadTopic(%s, %d): %v", tp.Name(), after, err)
		}
		if len(page) == 0 {
			return out
		}
		out = append(out, page...)
		after = page[len(page)-1].Position
	}
}

// testRMTopicTwoTopics: two topics published interleaved, in one
// transaction and in several, each read back whole (by range and by
// partition) with its own messages only, fields exact, positions rising;
// on a counter engine each topic numbers its own from 1 without gaps.
func testRMTopicTwoTopics(t T, env *Env) {
	rig := openRMRig(t, env)
	ctx, cancel := testtime.Context(context.Background(), 2*time.Minute)
	defer cancel()
	a, b := rig.open(ctx, t, "summary-a"), rig.open(ctx, t, "summary-b")
	if _, err := topic.OpenReadModel(ctx, rig.e, "summary-a"); err != nil { // a second open seeds nothing new
		t.Fatalf("second OpenReadModel: %v", err)
	}
	at := time.Date(2026, 3, 4, 5, 6, 7, 123456000, time.UTC)
	first := topic.ReadModelMessage{Key: "acc-1", Type: "test.Summary", Payload: []byte(`{"balance":1}`), Metadata: []byte(`{"trace":"t-1"}`),
		CascadeDepth: 2, OccurredAt: at}
	tx, err := rig.e.DB.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var want = map[string][]topic.ReadModelMessage{}
	var ids = map[string][]topic.Published{}
	pub := func(tp *topic.ReadModelTopic, ms ...topic.ReadModelMessage) {
		out, err := tp.PublishTx(ctx, tx, ms...)
		if err != nil {
			_ = tx.Rollback()
			t.Fatalf("PublishTx(%s): %v", tp.Name(), err)
		}
		want[tp.Name()] = append(want[tp.Name()], ms...)
		ids[tp.Name()] = append(ids[tp.Name()], out...)
	}
	pub(a, first, rmMsg("acc-2", `{"balance":2}`))
	pub(b, rmMsg("acc-1", `{"b":1}`))
	tomb := rmMsg("acc-1", `{"balance":1}`)
	tomb.Deleted = true
	pub(a, tomb)
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		ms := []topic.ReadModelMessage{rmMsg(fmt.Sprintf("k-%d", i), fmt.Sprintf(`{"i":%d}`, i))}
		ids[b.Name()] = append(ids[b.Name()], rig.publish(ctx, t, b, ms...)...)
		want[b.Name()] = append(want[b.Name()], ms...)
		ids[a.Name()] = append(ids[a.Name()], rig.publish(ctx, t, a, ms...)...)
		want[a.Name()] = append(want[a.Name()], ms...)
	}
	for _, tp := range []*topic.ReadModelTopic{a, b} {
		ps := ids[tp.Name()]
		rig.advance(ctx, t, tp, ps[len(ps)-1].Position)
		got := readAllRM(ctx, t, tp)
		checkRMRecords(t, rig.e, tp, got, want[tp.Name()], ps)
		checkRMPartitions(ctx, t, tp, got)
	}
	if rig.adv == nil { // counter engines: each topic gapless from 1
		for _, tp := range []*topic.ReadModelTopic{a, b} {
			for i, r := range readAllRM(ctx, t, tp) {
				if r.Position != int64(i+1) {
					t.Errorf("%s: position %d at index %d, want %d (own counter, no gaps)", tp.Name(), r.Position, i, i+1)
				}
			}
		}
	}
}

// checkRMPartitions reads tp partition by partition: the records of got,
// each in its key's partition.
func checkRMPartitions(ctx context.Context, t T, tp *topic.ReadModelTopic, got []topic.ReadModelRecord) {
	t.Helper()
	var parts []topic.ReadModelRecord
	for p := range tp.Partitions() {
		page, _, err := tp.ReadPage(ctx, p, 0, 100)
		if err != nil {
			t.Fatalf("ReadPage(%d): %v", p, err)
		}
		for _, r := range page {
			if r.Partition != p || r.Partition != topic.PartitionKey(r.Key, tp.Partitions()) {
				t.Errorf("%s: record %d of key %q in partition %d read from %d", tp.Name(), r.Position, r.Key, r.Partition, p)
			}
		}
		parts = append(parts, page...)
	}
	sort.Slice(parts, func(i, j int) bool { return parts[i].Position < parts[j].Position })
	if fmt.Sprint(positionsOf(parts)) != fmt.Sprint(positionsOf(got)) {
		t.Errorf("%s: by partition %v, by range %v", tp.Name(), positionsOf(parts), positionsOf(got))
	}
}

func positionsOf(rs []topic.ReadModelRecord) []int64 {
	out := make([]int64, len(rs))
	for i, r := range rs {
		out[i] = r.Position
	}
	return out
}

// checkRMRecords compares what tp holds with what was published on it.
func checkRMRecords(t T, e *engine.Engine, tp *topic.ReadModelTopic, got []topic.ReadModelRecord, want []topic.ReadModelMessage, ids []topic.Published) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: read %d records, want %d", tp.Name(), len(got), len(want))
	}
	for i, r := range got {
		w := want[i]
		if r.ID != ids[i].ID || r.Position != ids[i].Position || r.Topic != tp.Name() {
			t.Errorf("%s[%d]: id %s position %d topic %s, want %s %d %s", tp.Name(), i, r.ID, r.Position, r.Topic, ids[i].ID, ids[i].Position, tp.Name())
		}
		if i > 0 && r.Position <= got[i-1].Position {
			t.Errorf("%s: positions not rising: %d after %d", tp.Name(), r.Position, got[i-1].Position)
		}
		if r.Key != w.Key || r.Type != w.Type || string(r.Payload) != string(w.Payload) || r.CascadeDepth != w.CascadeDepth ||
			r.Deleted != w.Deleted || r.Revision != 0 {
			t.Errorf("%s[%d]: %+v, want %+v", tp.Name(), i, r, w)
		}
		if (r.Metadata == nil) != (w.Metadata == nil) || string(r.Metadata) != string(w.Metadata) {
			t.Errorf("%s[%d]: metadata %q, want %q", tp.Name(), i, r.Metadata, w.Metadata)
		}
		if !w.OccurredAt.IsZero() && !r.OccurredAt.Equal(e.Cat.Facts.CutEventTime(w.OccurredAt)) {
			t.Errorf("%s[%d]: occurred_at %v, want %v", tp.Name(), i, r.OccurredAt, w.OccurredAt)
		}
	}
}

// testRMTopicRollback: a publish rolled back with its transaction leaves
// nothing readable, and on a counter engine gives its positions back.
func testRMTopicRollback(t T, env *Env) {
	rig := openRMRig(t, env)
	ctx, cancel := testtime.Context(context.Background(), 2*time.Minute)
	defer cancel()
	tp := rig.open(ctx, t, "summary-rollback")
	tx, err := rig.e.DB.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tp.PublishTx(ctx, tx, rmMsg("acc-1", `{"n":1}`), rmMsg("acc-2", `{"n":2}`)); err != nil {
		t.Fatalf("PublishTx: %v", err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	kept := rig.publish(ctx, t, tp, rmMsg("acc-3", `{"n":3}`))
	rig.advance(ctx, t, tp, kept[0].Position)
	got := readAllRM(ctx, t, tp)
	if len(got) != 1 || got[0].ID != kept[0].ID {
		t.Fatalf("read %+v, want only the committed message %s", got, kept[0].ID)
	}
	if _, err := tp.ReadByID(ctx, rig.e.DB, got[0].ID); err != nil {
		t.Fatalf("ReadByID: %v", err)
	}
	if rig.adv == nil && kept[0].Position != 1 {
		t.Errorf("position %d after a rollback, want 1 (the counter restored)", kept[0].Position)
	}
}

// testRMTopicFollow: Follow on one topic sees each of its messages once, in
// order, and none of the other topic's published between them.
func testRMTopicFollow(t T, env *Env) {
	rig := openRMRig(t, env)
	ctx, cancel := testtime.Context(context.Background(), 2*time.Minute)
	defer cancel()
	a, b := rig.open(ctx, t, "follow-a"), rig.open(ctx, t, "follow-b")
	var want []topic.Published
	for i := range 6 {
		want = append(want, rig.publish(ctx, t, a, rmMsg(fmt.Sprintf("k-%d", i%3), fmt.Sprintf(`{"i":%d}`, i)))...)
		rig.publish(ctx, t, b, rmMsg("k-0", `{}`))
	}
	rig.advance(ctx, t, a, want[len(want)-1].Position)
	fctx, stop := context.WithCancel(ctx)
	defer stop()
	var got []topic.ReadModelRecord
	err := a.Follow(fctx, 0, topic.FollowOptions{PollInterval: 5 * time.Millisecond, PageSize: 4}, func(r topic.ReadModelRecord) error {
		got = append(got, r)
		if len(got) == len(want) {
			stop()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Follow returned %v, want the stop", err)
	}
	for i, r := range got {
		if r.Topic != a.Name() || r.ID != want[i].ID || r.Position != want[i].Position {
			t.Errorf("Follow[%d]: %s %s %d, want %s %s %d", i, r.Topic, r.ID, r.Position, a.Name(), want[i].ID, want[i].Position)
		}
	}
	m, err := a.Mark(ctx)
	if err != nil || m < want[len(want)-1].Position {
		t.Errorf("Mark %d, %v; want at least %d", m, err, want[len(want)-1].Position)
	}
}

// testRMTopicSequenceRecreated: where one sequence numbers every topic, a
// sequence recreated behind the stored positions and the mark is moved past
// both when a topic is opened, so a new message is above both and readable.
func testRMTopicSequenceRecreated(t T, env *Env) {
	rig := openRMRig(t, env)
	if rig.e.Cat.Positions != dialect.SequenceXIDHorizon {
		skipf(t, "%s numbers each topic on its own counter row: there is no shared sequence to recreate", rig.e.Cat.Identity.Name)
	}
	ctx, cancel := testtime.Context(context.Background(), 2*time.Minute)
	defer cancel()
	tp := rig.open(ctx, t, "summary-seq")
	other := rig.open(ctx, t, "summary-seq-other")
	old := rig.publish(ctx, t, tp, rmMsg("a", `{}`), rmMsg("b", `{}`))
	late := rig.publish(ctx, t, other, rmMsg("a", `{}`))
	rig.advance(ctx, t, tp, late[0].Position)
	mark, err := tp.Mark(ctx)
	if err != nil {
		t.Fatal(err)
	}
	seq := rig.e.Names.Shared[engine.ReadModelPositions.Placeholder]
	for _, q := range []string{`DROP SEQUENCE ` + seq, `CREATE SEQUENCE ` + seq + ` START WITH 1 CACHE 1`} {
		if _, err := rig.e.DB.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	tp = rig.open(ctx, t, "summary-seq")
	got := rig.publish(ctx, t, tp, rmMsg("c", `{}`))
	if got[0].Position <= old[1].Position || got[0].Position <= mark {
		t.Fatalf("position %d after the sequence was recreated, want above the topic's %d and the mark %d", got[0].Position, old[1].Position, mark)
	}
	rig.advance(ctx, t, tp, got[0].Position)
	recs := readAllRM(ctx, t, tp)
	if len(recs) != 3 || recs[2].ID != got[0].ID {
		t.Fatalf("read %d records (last %+v), want 3 ending with %s", len(recs), recs[len(recs)-1], got[0].ID)
	}
}

// testRMTopicByIDLatest: ReadByID returns the topic's message exactly (and
// no other topic's); Latest the highest position of a key, a tombstone
// too, and in the caller's transaction its own uncommitted message.
func testRMTopicByIDLatest(t T, env *Env) {
	rig := openRMRig(t, env)
	ctx, cancel := testtime.Context(context.Background(), 2*time.Minute)
	defer cancel()
	tp, other := rig.open(ctx, t, "summary-id"), rig.open(ctx, t, "summary-id-other")
	p1 := rig.publish(ctx, t, tp, rmMsg("acc-1", `{"v":1}`), rmMsg("acc-2", `{"v":1}`))
	tomb := rmMsg("acc-1", `{"v":2}`)
	tomb.Deleted, tomb.CascadeDepth = true, 3
	p2 := rig.publish(ctx, t, tp, tomb)
	po := rig.publish(ctx, t, other, rmMsg("acc-1", `{"v":9}`))
	r, err := tp.ReadByID(ctx, rig.e.DB, strings.ToUpper(p1[1].ID))
	if err != nil {
		t.Fatalf("ReadByID: %v", err)
	}
	if r.ID != p1[1].ID || r.Key != "acc-2" || string(r.Payload) != `{"v":1}` || r.Position != p1[1].Position {
		t.Errorf("ReadByID: %+v, want acc-2 at %d", r, p1[1].Position)
	}
	if _, err := tp.ReadByID(ctx, rig.e.DB, po[0].ID); !errors.Is(err, topic.ErrNoRecord) {
		t.Errorf("ReadByID of another topic's message: %v, want ErrNoRecord", err)
	}
	l, err := tp.Latest(ctx, rig.e.DB, "acc-1")
	if err != nil {
		t.Fatalf("Latest: %v", err)
	}
	if l.ID != p2[0].ID || !l.Deleted || l.CascadeDepth != 3 || string(l.Payload) != `{"v":2}` {
		t.Errorf("Latest(acc-1): %+v, want the tombstone %s", l, p2[0].ID)
	}
	if _, err := tp.Latest(ctx, rig.e.DB, "acc-none"); !errors.Is(err, topic.ErrNoRecord) {
		t.Errorf("Latest of a key without messages: %v, want ErrNoRecord", err)
	}
	tx, err := rig.e.DB.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	own, err := tp.PublishTx(ctx, tx, rmMsg("acc-2", `{"v":2}`))
	if err != nil {
		t.Fatalf("PublishTx: %v", err)
	}
	if l, err := tp.Latest(ctx, tx, "acc-2"); err != nil || l.ID != own[0].ID {
		t.Errorf("Latest in the publishing transaction: %+v, %v; want %s", l, err, own[0].ID)
	}
	if r, err := tp.ReadByID(ctx, tx, own[0].ID); err != nil || r.Position != own[0].Position {
		t.Errorf("ReadByID in the publishing transaction: %+v, %v", r, err)
	}
}

// testRMTopicBadInput: every refusal is typed and comes before any SQL (on
// a transaction already ended, any statement would fail otherwise).
func testRMTopicBadInput(t T, env *Env) {
	rig := openRMRig(t, env)
	ctx, cancel := testtime.Context(context.Background(), 2*time.Minute)
	defer cancel()
	for _, name := range []string{"", strings.Repeat("n", topic.MaxReadModelTopicLength+1), "bad\xffname"} {
		_, err := topic.OpenReadModel(ctx, rig.e, name)
		expectErr[*topic.InvalidTopicNameError](t, err, fmt.Sprintf("topic name %q", name))
	}
	tp := rig.open(ctx, t, "summary-bad")
	tx, err := rig.e.DB.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("é", topic.MaxKeyLength+1)
	bad := func(f func(*topic.ReadModelMessage)) topic.ReadModelMessage {
		m := rmMsg("acc-1", `{}`)
		f(&m)
		return m
	}
	for what, m := range map[string]topic.ReadModelMessage{
		"an empty key":               bad(func(m *topic.ReadModelMessage) { m.Key = "" }),
		"a 256-character key":        bad(func(m *topic.ReadModelMessage) { m.Key = long }),
		"an invalid UTF-8 key":       bad(func(m *topic.ReadModelMessage) { m.Key = "bad\xffkey" }),
		"an empty type":              bad(func(m *topic.ReadModelMessage) { m.Type = "" }),
		"cascade depth 0":            bad(func(m *topic.ReadModelMessage) { m.CascadeDepth = 0 }),
		"a payload that is not JSON": bad(func(m *topic.ReadModelMessage) { m.Payload = []byte(`not json`) }),
		"metadata that is not JSON":  bad(func(m *topic.ReadModelMessage) { m.Metadata = []byte(`{`) }),
		"a NUL in the payload":       bad(func(m *topic.ReadModelMessage) { m.Payload = []byte("{\"a\":\"\x00\"}") }),
	} {
		_, err := tp.PublishTx(ctx, tx, rmMsg("ok", `{}`), m)
		if !errors.Is(err, topic.ErrInvalidMessage) {
			t.Errorf("%s: %v, want ErrInvalidMessage", what, err)
		}
	}
	_, err = tp.PublishTx(ctx, tx, bad(func(m *topic.ReadModelMessage) { m.Key = long }))
	if kt := expectErr[*topic.KeyTooLongError](t, err, "a 256-character key"); kt.Length != 256 || kt.Limit != 255 {
		t.Errorf("KeyTooLongError %+v", kt)
	}
	if _, err := tp.ReadByID(ctx, tx, "not-a-uuid"); !errors.Is(err, topic.ErrInvalidMessage) {
		t.Errorf("ReadByID(not-a-uuid): %v, want ErrInvalidMessage", err)
	}
	if _, err := tp.Latest(ctx, tx, ""); !errors.Is(err, topic.ErrInvalidMessage) {
		t.Errorf("Latest(\"\"): %v, want ErrInvalidMessage", err)
	}
	// The longest key is stored exactly; nothing refused was.
	max255 := strings.Repeat("é", topic.MaxKeyLength)
	p := rig.publish(ctx, t, tp, rmMsg(max255, `{"n":1}`))
	rig.advance(ctx, t, tp, p[0].Position)
	got := readAllRM(ctx, t, tp)
	if len(got) != 1 || got[0].Key != max255 {
		t.Fatalf("read %d records (want only the 255-character key's)", len(got))
	}
}
