package conformance

import (
	"context"
	"errors"
	"hash/fnv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/tidemarkdb/tidemark/core/consumer"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/eventstore"
)

func consumerAdminTests() []Test {
	return []Test{
		{"consumer/admin_status_lag_and_counts", testAdminStatus},
		{"consumer/admin_pause_resume_fresh_budget", testAdminPauseResume},
		{"consumer/registry_resume_fresh_budget", testRegistryResume},
		{"consumer/admin_resume_past_records_skips", testAdminResumePast},
		{"consumer/admin_retry_dead_letters", testAdminRetry},
		{"consumer/admin_delete_dead_letters", testAdminDelete},
		{"consumer/admin_skip", testAdminSkip},
		{"consumer/admin_unsubscribe_cleanup", testAdminUnsubscribe},
		{"consumer/admin_input_refused_before_sql", testAdminRefused},
	}
}

// adminRow is an undelivered row a test inserts itself: the runner's
// writes are not what these tests exercise, the operator's row effects are.
type adminRow struct {
	source    string
	partition int
	key       string
	pos       int64
	status    consumer.DeliveryStatus
	failures  int
	nextRetry *time.Time
	reason    string
}

// adminFixture is a consumer subscribed to the event store and to a second
// topic (testTopic, 2 partitions) on a fresh engine.
type adminFixture struct {
	s     *eventstore.Store
	e     *engine.Engine
	reg   *consumer.Registry
	op    *consumer.Operator
	ref   consumer.Ref
	id    string
	clock *fakeClock
}

const adminTopic = "admin-test-topic"

func newAdminFixture(t T, env *Env) *adminFixture {
	t.Helper()
	s, e := openStore(t, env)
	clock := newFakeClock()
	reg := consumer.NewRegistry(e, clock.Now)
	ref := consumer.Ref{Type: "projection", Name: "account-summary"}
	c, err := reg.Subscribe(context.Background(), ref.Type, ref.Name,
		consumer.SourceRef{Name: engine.EventStoreTopic, Partitions: e.Partitions}, consumer.SourceRef{Name: adminTopic, Partitions: 2})
	if err != nil {
		t.Fatalf("subscribe: %v", err)
	}
	return &adminFixture{s: s, e: e, reg: reg, op: reg.Operator(), ref: ref, id: c.ID, clock: clock}
}

// adminKeyHash is FNV-1a 64 of the key as int64, as the runner stamps key_hash.
func adminKeyHash(key string) int64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(key))
	return int64(h.Sum64())
}

// insert writes r with a test-only INSERT through the engine and returns
// its id.
func (f *adminFixture) insert(t T, r adminRow) string {
	t.Helper()
	id := uuid.NewString()
	var next, reason any
	if r.nextRetry != nil {
		next = r.nextRetry.UTC()
	}
	if r.reason != "" {
		reason = r.reason
	}
	_, err := f.e.ExecText(context.Background(), f.e.DB, `INSERT INTO ${consumer_undelivered_messages_table} `+
		`(id, consumer_id, source_name, resolved_key, key_hash, message_position, partition_no, status, failure_count, next_retry_at, failure_reason, recorded_at, unresolved, message_copy) `+
		`VALUES (#{id}, #{consumer_id}, #{source_name}, #{resolved_key}, #{key_hash}, #{message_position}, #{partition_no}, #{status}, #{failure_count}, #{next_retry_at}, #{failure_reason}, #{recorded_at}, #{unresolved}, #{message_copy})`,
		nil, map[string]any{"id": id, "consumer_id": f.id, "source_name": r.source, "resolved_key": r.key, "key_hash": adminKeyHash(r.key),
			"message_position": r.pos, "partition_no": r.partition, "status": string(r.status), "failure_count": r.failures,
			"next_retry_at": next, "failure_reason": reason, "recorded_at": f.clock.Now(), "unresolved": false, "message_copy": `{"copy":true}`})
	if err != nil {
		t.Fatalf("inserting undelivered row %+v: %v", r, err)
	}
	return id
}

// rows returns the consumer's undelivered rows by id.
func (f *adminFixture) rows(t T) map[string]consumer.UndeliveredRow {
	t.Helper()
	all, err := f.op.Undelivered(context.Background(), f.ref)
	if err != nil {
		t.Fatalf("listing undelivered rows: %v", err)
	}
	out := map[string]consumer.UndeliveredRow{}
	for _, u := range all {
		out[u.ID] = u
	}
	return out
}

// adminExpectRow checks row id's status and failure count, and that a fresh
// budget is due at once.
func adminExpectRow(t T, rows map[string]consumer.UndeliveredRow, id string, status consumer.DeliveryStatus, failures int) {
	t.Helper()
	u, ok := rows[id]
	if !ok {
		t.Errorf("row %s is gone, want it %s with %d failures", id, status, failures)
		return
	}
	if u.Status != status || u.FailureCount != failures {
		t.Errorf("row %s at %d is %s with %d failures, want %s with %d", id, u.Position, u.Status, u.FailureCount, status, failures)
	}
	if failures == 0 && !u.NextRetryAt.IsZero() {
		t.Errorf("row %s at %d: next_retry_at %s, want NULL (at once)", id, u.Position, u.NextRetryAt)
	}
}

func adminExpectGone(t T, rows map[string]consumer.UndeliveredRow, ids ...string) {
	t.Helper()
	for _, id := range ids {
		if u, ok := rows[id]; ok {
			t.Errorf("row %s at %d is still there (%s)", id, u.Position, u.Status)
		}
	}
}

// expectSkips checks the consumer's skips on source are exactly want.
func (f *adminFixture) expectSkips(t T, source string, want ...consumer.Skip) {
	t.Helper()
	got, err := f.reg.Skips(context.Background(), f.id, source, 0)
	if err != nil {
		t.Fatalf("reading skips: %v", err)
	}
	have := map[consumer.Skip]bool{}
	for _, s := range got {
		have[s] = true
	}
	for _, s := range want {
		if !have[s] {
			t.Errorf("no skip %+v among %+v", s, got)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d skips %+v, want %d", len(got), got, len(want))
	}
}

func adminMust(t T, what string) func(consumer.Changes, error) consumer.Changes {
	return func(ch consumer.Changes, err error) consumer.Changes {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return ch
	}
}

func testAdminStatus(t T, env *Env) {
	f := newAdminFixture(t, env)
	ctx := context.Background()
	positions := appendSpread(t, f.s, f.e, []string{"a-1", "a-2", "a-3"}, 6)
	mark := positions[len(positions)-1]
	if _, err := f.reg.Advance(ctx, nil, f.id, engine.EventStoreTopic, 1, 2, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := f.e.ExecText(ctx, f.e.DB, `UPDATE ${consumer_checkpoints_table} SET incomplete_through = #{v} WHERE consumer_id = #{consumer_id} AND source_name = #{source_name}`,
		nil, map[string]any{"v": int64(3), "consumer_id": f.id, "source_name": adminTopic}); err != nil {
		t.Fatal(err)
	}
	next := f.clock.Now().Add(time.Minute)
	reason := "apply: " + strings.Repeat("é", 20)
	f.insert(t, adminRow{source: engine.EventStoreTopic, partition: 1, key: "k1", pos: 3, status: consumer.StatusFailed, failures: 2, nextRetry: &next, reason: reason})
	f.insert(t, adminRow{source: engine.EventStoreTopic, partition: 1, key: "k1", pos: 4, status: consumer.StatusWaiting})
	dl := f.insert(t, adminRow{source: engine.EventStoreTopic, partition: 2, key: "k2", pos: 5, status: consumer.StatusDeadLetter, failures: 5, reason: "boom"})

	st, err := f.op.Status(ctx, f.ref)
	if err != nil {
		t.Fatalf("status: %v", err)
	}
	if st.ID != f.id || st.State != consumer.Running || !st.StateSince.Equal(f.clock.Now()) {
		t.Errorf("status %+v, want running consumer %s since %s", st, f.id, f.clock.Now())
	}
	if len(st.Partitions) != f.e.Partitions+2 {
		t.Fatalf("%d partitions, want %d", len(st.Partitions), f.e.Partitions+2)
	}
	for _, p := range st.Partitions {
		switch p.Source {
		case engine.EventStoreTopic:
			wantLag := mark
			if p.Partition == 1 {
				wantLag = mark - 2
				if p.Checkpoint == nil || *p.Checkpoint != 2 {
					t.Errorf("partition 1 checkpoint %v, want 2", p.Checkpoint)
				}
			} else if p.Checkpoint != nil {
				t.Errorf("partition %d checkpoint %d, want none", p.Partition, *p.Checkpoint)
			}
			if p.Mark == nil || *p.Mark != mark || p.Lag != wantLag || p.IncompleteThrough != nil {
				t.Errorf("event store partition %d: %+v, want mark %d lag %d, complete", p.Partition, p, mark, wantLag)
			}
		case adminTopic:
			// No mark row for the topic: its mark is unknown, not 0.
			if p.Mark != nil || p.Lag != 0 || p.IncompleteThrough == nil || *p.IncompleteThrough != 3 {
				t.Errorf("topic partition %d: %+v, want no mark, lag 0, incomplete through 3", p.Partition, p)
			}
		}
	}
	want := map[consumer.DeliveryStatus]int64{consumer.StatusFailed: 1, consumer.StatusWaiting: 1, consumer.StatusDeadLetter: 1}
	if len(st.Undelivered) != len(want) {
		t.Errorf("undelivered counts %v, want %v", st.Undelivered, want)
	}
	for k, v := range want {
		if st.Undelivered[k] != v {
			t.Errorf("undelivered counts %v, want %v", st.Undelivered, want)
		}
	}
	list, err := f.op.List(ctx)
	if err != nil || len(list) != 1 || list[0].ID != f.id || len(list[0].Partitions) != len(st.Partitions) {
		t.Fatalf("list: %v %+v, want the one consumer", err, list)
	}
	dls, err := f.op.DeadLetters(ctx, f.ref)
	if err != nil || len(dls) != 1 {
		t.Fatalf("dead letters: %v %+v, want one", err, dls)
	}
	d := dls[0]
	if d.ID != dl || d.Source != engine.EventStoreTopic || d.Partition != 2 || d.Key != "k2" || d.Position != 5 ||
		d.Status != consumer.StatusDeadLetter || d.FailureCount != 5 || d.FailureReason != "boom" || !d.NextRetryAt.IsZero() || !d.RecordedAt.Equal(f.clock.Now()) {
		t.Errorf("dead letter %+v", d)
	}
	for _, u := range f.rows(t) {
		if u.Position == 3 && (!u.NextRetryAt.Equal(next) || u.FailureReason != reason) {
			t.Errorf("failed row: next %v reason %q, want %s %q", u.NextRetryAt, u.FailureReason, next, reason)
		}
	}
}

func testAdminPauseResume(t T, env *Env) {
	f := newAdminFixture(t, env)
	ctx := context.Background()
	since := f.clock.Add(time.Minute)
	ch := adminMust(t, "pause")(f.op.Pause(ctx, f.ref))
	if ch.State != consumer.Paused {
		t.Errorf("pause changed %+v", ch)
	}
	checkState(t, mustConsumer(t, f.reg, f.id), consumer.Paused, "", 0, since)
	_, err := f.op.Pause(ctx, f.ref)
	expectErr[*consumer.TransitionError](t, err, "pausing a paused consumer")
	adminMust(t, "resume paused")(f.op.Resume(ctx, f.ref))
	checkState(t, mustConsumer(t, f.reg, f.id), consumer.Running, "", 0, f.clock.Now())
	_, err = f.op.Resume(ctx, f.ref)
	expectErr[*consumer.TransitionError](t, err, "resuming a running consumer")

	// A halted consumer's HALTED row gets a fresh budget with the resume.
	ids := f.haltWithRows(t, 0)
	since = f.clock.Add(time.Minute)
	ch = adminMust(t, "resume halted")(f.op.Resume(ctx, f.ref))
	if ch.State != consumer.Running || ch.Released != 1 || ch.Waiting != 0 || ch.Deleted != 0 {
		t.Errorf("resume changed %+v, want running with 1 released", ch)
	}
	checkState(t, mustConsumer(t, f.reg, f.id), consumer.Running, "", 0, since)
	f.expectResumed(t, ids)
	f.expectSkips(t, engine.EventStoreTopic)
}

// haltWithRows records a HALTED row with a WAITING row behind it and a
// FAILED row of another key in partition, and halts the consumer; it
// returns the rows' ids (halted, waiting, failed).
func (f *adminFixture) haltWithRows(t T, partition int) [3]string {
	next := f.clock.Now().Add(time.Hour)
	ids := [3]string{
		f.insert(t, adminRow{source: engine.EventStoreTopic, partition: partition, key: "k", pos: 7, status: consumer.StatusHalted, failures: 3, reason: "poison"}),
		f.insert(t, adminRow{source: engine.EventStoreTopic, partition: partition, key: "k", pos: 9, status: consumer.StatusWaiting}),
		f.insert(t, adminRow{source: engine.EventStoreTopic, partition: partition, key: "other", pos: 8, status: consumer.StatusFailed, failures: 1, nextRetry: &next}),
	}
	if err := f.reg.Halt(context.Background(), f.id, consumer.ApplyError); err != nil {
		t.Fatal(err)
	}
	return ids
}

// expectResumed checks haltWithRows' rows after a resume: the HALTED row
// FAILED with a fresh budget (due at once, its reason kept), the others
// as they were.
func (f *adminFixture) expectResumed(t T, ids [3]string) {
	rows := f.rows(t)
	adminExpectRow(t, rows, ids[0], consumer.StatusFailed, 0)
	adminExpectRow(t, rows, ids[1], consumer.StatusWaiting, 0)
	adminExpectRow(t, rows, ids[2], consumer.StatusFailed, 1)
	if rows[ids[0]].FailureReason != "poison" {
		t.Errorf("resume lost the last failure's reason: %q", rows[ids[0]].FailureReason)
	}
}

// testRegistryResume: Registry.Resume (by id) follows the same rule as
// the operator's: the HALTED rows become FAILED with a fresh budget in the
// resume's transaction, the others stay as they were.
func testRegistryResume(t T, env *Env) {
	f := newAdminFixture(t, env)
	ctx := context.Background()
	ids := f.haltWithRows(t, 1)
	since := f.clock.Add(time.Minute)
	if err := f.reg.Resume(ctx, f.id); err != nil {
		t.Fatal(err)
	}
	checkState(t, mustConsumer(t, f.reg, f.id), consumer.Running, "", 0, since)
	f.expectResumed(t, ids)
	// A paused consumer resumes the same way (no HALTED row is left here).
	if err := f.reg.Pause(ctx, f.id); err != nil {
		t.Fatal(err)
	}
	if err := f.reg.Resume(ctx, f.id); err != nil {
		t.Fatal(err)
	}
	checkState(t, mustConsumer(t, f.reg, f.id), consumer.Running, "", 0, f.clock.Now())
	expectErr[*consumer.TransitionError](t, f.reg.Resume(ctx, f.id), "resuming a running consumer")
}

func testAdminResumePast(t T, env *Env) {
	f := newAdminFixture(t, env)
	ctx := context.Background()
	halted := f.insert(t, adminRow{source: engine.EventStoreTopic, partition: 3, key: "k", pos: 11, status: consumer.StatusHalted, failures: 3, reason: "poison"})
	waiting := f.insert(t, adminRow{source: engine.EventStoreTopic, partition: 3, key: "k", pos: 12, status: consumer.StatusWaiting})
	_, err := f.op.ResumePast(ctx, f.ref)
	if !errors.Is(err, consumer.ErrTransition) {
		t.Fatalf("resume past on a running consumer: %v, want ErrTransition", err)
	}
	expectErr[*consumer.NotHaltedError](t, err, "resume past on a running consumer")
	adminExpectRow(t, f.rows(t), halted, consumer.StatusHalted, 3)

	if err := f.reg.Halt(ctx, f.id, consumer.ApplyError); err != nil {
		t.Fatal(err)
	}
	since := f.clock.Add(time.Minute)
	ch := adminMust(t, "resume past")(f.op.ResumePast(ctx, f.ref))
	if ch.State != consumer.Running || ch.Deleted != 1 || ch.Skips != 1 || ch.Released != 0 {
		t.Errorf("resume past changed %+v, want running, 1 deleted, 1 skip", ch)
	}
	checkState(t, mustConsumer(t, f.reg, f.id), consumer.Running, "", 0, since)
	rows := f.rows(t)
	adminExpectGone(t, rows, halted)
	adminExpectRow(t, rows, waiting, consumer.StatusWaiting, 0)
	f.expectSkips(t, engine.EventStoreTopic, consumer.Skip{Source: engine.EventStoreTopic, Partition: 3, Position: 11, Key: "k"})
}
