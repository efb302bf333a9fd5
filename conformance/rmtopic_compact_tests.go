package conformance

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/tidemarkdb/tidemark/core/topic"
	"github.com/tidemarkdb/tidemark/internal/testtime"
)

// latestByKey is each key's message with the highest position.
func latestByKey(rs []topic.ReadModelRecord) map[string]topic.ReadModelRecord {
	out := map[string]topic.ReadModelRecord{}
	for _, r := range rs {
		if cur, ok := out[r.Key]; !ok || r.Position > cur.Position {
			out[r.Key] = r
		}
	}
	return out
}

// testRMTopicCompaction: Compact deletes every message of a key below its
// newest committed one, never the newest, nor another topic's; records its
// progress; a reader behind converges on the latest state of every key;
// on PostgreSQL a newer message above the mark supersedes nothing yet.
func testRMTopicCompaction(t T, env *Env) {
	rig := openRMRig(t, env)
	ctx, cancel := testtime.Context(context.Background(), 2*time.Minute)
	defer cancel()
	tp, other := rig.open(ctx, t, "summary-compact"), rig.open(ctx, t, "summary-compact-other")
	var all []topic.Published
	for i := range 12 {
		m := rmMsg(fmt.Sprintf("acc-%d", i%4), fmt.Sprintf(`{"v":%d}`, i))
		m.Deleted = i == 9
		all = append(all, rig.publish(ctx, t, tp, m)...)
		rig.publish(ctx, t, other, rmMsg(fmt.Sprintf("acc-%d", i%4), `{}`))
	}
	last := all[len(all)-1].Position
	rig.advance(ctx, t, tp, last)
	before := readAllRM(ctx, t, tp)
	want := latestByKey(before)
	behind := before[2].Position // a reader that has applied three messages
	res, err := tp.Compact(ctx, topic.CompactOptions{})
	if err != nil {
		t.Fatalf("Compact: %v", err)
	}
	mark, _ := tp.Mark(ctx)
	if res.Through != mark || (res.Superseded != 8 && res.Superseded != -1) {
		t.Errorf("Compact: %+v, want through the mark %d, 8 superseded", res, mark)
	}
	after := readAllRM(ctx, t, tp)
	if len(after) != 4 {
		t.Fatalf("after compaction %d messages, want 4 (one per key)", len(after))
	}
	for _, r := range after {
		if w := want[r.Key]; r.ID != w.ID || r.Deleted != w.Deleted {
			t.Errorf("key %s kept %s, want its latest %s", r.Key, r.ID, w.ID)
		}
	}
	// A reader behind: its state per key (applied in order) is the latest.
	state := latestByKey(before[:3])
	page, err := tp.ReadTopic(ctx, behind, 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range page {
		state[r.Key] = r
	}
	for k, w := range want {
		if state[k].ID != w.ID {
			t.Errorf("reader behind converged on %s for %s, want %s", state[k].ID, k, w.ID)
		}
	}
	if n := len(readAllRM(ctx, t, other)); n != 12 {
		t.Errorf("the other topic holds %d messages after compaction, want its 12", n)
	}
	compactAgain(ctx, t, rig, tp, mark)
}

// compactAgain: a second Compact deletes nothing; a newer message of one
// key supersedes exactly that key's message once the mark passes it.
func compactAgain(ctx context.Context, t T, rig *rmRig, tp *topic.ReadModelTopic, mark int64) {
	t.Helper()
	if res, err := tp.Compact(ctx, topic.CompactOptions{}); err != nil || res.Superseded > 0 || res.Through != mark {
		t.Errorf("second Compact: %+v, %v; want nothing deleted, through %d", res, err, mark)
	}
	newer := rig.publish(ctx, t, tp, rmMsg("acc-1", `{"v":99}`))
	if rig.adv != nil {
		// Above the mark: not committed as far as readers know.
		if res, err := tp.Compact(ctx, topic.CompactOptions{}); err != nil || res.Superseded > 0 {
			t.Errorf("Compact with the newer message above the mark: %+v, %v; want nothing deleted", res, err)
		}
	}
	rig.advance(ctx, t, tp, newer[0].Position)
	if res, err := tp.Compact(ctx, topic.CompactOptions{}); err != nil || (res.Superseded != 1 && res.Superseded != -1) || res.Through < newer[0].Position {
		t.Errorf("Compact after a newer message: %+v, %v; want 1 deleted through %d", res, err, newer[0].Position)
	}
	got := readAllRM(ctx, t, tp)
	ids := make([]string, 0, len(got))
	for _, r := range got {
		ids = append(ids, r.Key)
	}
	sort.Strings(ids)
	if fmt.Sprint(ids) != "[acc-0 acc-1 acc-2 acc-3]" {
		t.Errorf("keys after the second compaction %v", ids)
	}
	if l, err := tp.Latest(ctx, rig.e.DB, "acc-1"); err != nil || l.ID != newer[0].ID {
		t.Errorf("Latest(acc-1) %+v, %v; want %s", l, err, newer[0].ID)
	}
}

// testRMTopicTombstoneRetention: tombstones are deleted only with a max
// age, once older than it, compacted, and below every consumer's
// checkpoint on the topic (a partition without a position holds them all).
func testRMTopicTombstoneRetention(t T, env *Env) {
	rig := openRMRig(t, env)
	ctx, cancel := testtime.Context(context.Background(), 2*time.Minute)
	defer cancel()
	tp := rig.open(ctx, t, "summary-tombstones")
	old := time.Now().Add(-3 * time.Hour)
	tomb := func(key string, at time.Time) topic.ReadModelMessage {
		m := rmMsg(key, `{"gone":true}`)
		m.Deleted, m.OccurredAt = true, at
		return m
	}
	p := rig.publish(ctx, t, tp, tomb("old-1", old), tomb("old-2", old), tomb("recent", time.Now()), rmMsg("live", `{}`))
	rig.advance(ctx, t, tp, p[3].Position)
	if res, err := tp.Compact(ctx, topic.CompactOptions{}); err != nil || res.Tombstones != 0 {
		t.Fatalf("Compact without a max age: %+v, %v; want no tombstone deleted", res, err)
	}
	n := rig.e.Partitions
	empty := checkpointsAt(n, p[3].Position)
	empty[0] = nil
	subscribeTo(ctx, t, rig.e, tp.SourceName(), "rm-empty", empty)
	if res, err := tp.Compact(ctx, topic.CompactOptions{TombstoneMaxAge: time.Hour}); err != nil || res.Tombstones != 0 {
		t.Fatalf("Compact with a consumer without a position: %+v, %v; want no tombstone deleted", res, err)
	}
	if _, err := rig.e.ExecText(ctx, rig.e.DB, `UPDATE ${consumer_checkpoints_table} SET `+positionColumn(rig.e)+` = #{pos} WHERE `+positionColumn(rig.e)+` IS NULL`,
		nil, map[string]any{"pos": p[3].Position}); err != nil {
		t.Fatal(err)
	}
	slow := checkpointsAt(n, p[3].Position)
	slow[1] = p[1].Position // keeps old-2 and on
	subscribeTo(ctx, t, rig.e, tp.SourceName(), "rm-slow", slow)
	if res, err := tp.Compact(ctx, topic.CompactOptions{TombstoneMaxAge: time.Hour}); err != nil || (res.Tombstones != 1 && res.Tombstones != -1) {
		t.Fatalf("Compact below the slowest checkpoint: %+v, %v; want old-1 deleted", res, err)
	}
	keys := func() string {
		var ks []string
		for _, r := range readAllRM(ctx, t, tp) {
			ks = append(ks, r.Key)
		}
		return fmt.Sprint(ks)
	}
	if got := keys(); got != "[old-2 recent live]" {
		t.Fatalf("after retention below the slowest checkpoint: %s", got)
	}
	if _, err := rig.e.ExecText(ctx, rig.e.DB, `UPDATE ${consumer_checkpoints_table} SET `+positionColumn(rig.e)+` = #{pos}`,
		nil, map[string]any{"pos": p[3].Position}); err != nil {
		t.Fatal(err)
	}
	if _, err := tp.Compact(ctx, topic.CompactOptions{TombstoneMaxAge: time.Hour}); err != nil {
		t.Fatal(err)
	}
	if got := keys(); got != "[recent live]" {
		t.Fatalf("after every consumer passed: %s, want the recent tombstone and the live model", got)
	}
}
