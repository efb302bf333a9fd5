package conformance

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/eventstore"
	"github.com/tidemarkdb/tidemark/core/topic"
	"github.com/tidemarkdb/tidemark/internal/testtime"
)

// testCaptureKeyRefusals: a key over 255 characters and invalid UTF-8 are
// refused with typed errors before any SQL (the topic's *sql.DB is closed
// before the publish: any statement would fail with "database is closed"),
// and a 255-character key of multi-byte characters is stored exactly, as
// is the longest key of four-byte characters the engine's unit allows.
func testCaptureKeyRefusals(t T, env *Env) {
	db := env.OpenDB()
	ctx, cancel := testtime.Context(context.Background(), 2*time.Minute)
	defer cancel()
	e, err := engine.Open(ctx, db, env.Catalogue, defaultConfig(env))
	if err != nil {
		t.Fatalf("engine.Open: %v", err)
	}
	tp, err := topic.New(ctx, e)
	if err != nil {
		t.Fatalf("topic.New: %v", err)
	}
	e.Close()
	db.Close()
	long := strings.Repeat("é", topic.MaxKeyLength+1)
	_, err = tp.Publish(ctx, msg("ok", `{}`), msg(long, `{}`))
	kt := expectErr[*topic.KeyTooLongError](t, err, "a 256-character key")
	if kt.Length != 256 || kt.Limit != 255 || kt.Index != 1 || !errors.Is(err, topic.ErrInvalidMessage) {
		t.Errorf("KeyTooLongError %+v, errors.Is(ErrInvalidMessage) %v", kt, errors.Is(err, topic.ErrInvalidMessage))
	}
	// The most four-byte characters the key column holds in the engine's
	// unit (EngineFacts.TextUnit), and one more: refused before SQL.
	four := mostFourByte(env.Catalogue.Facts, topic.MaxKeyLength)
	_, err = tp.Publish(ctx, msg(strings.Repeat("😀", four+1), `{}`))
	kt = expectErr[*topic.KeyTooLongError](t, err, fmt.Sprintf("a key of %d four-byte characters", four+1))
	if kt.Limit != 255 {
		t.Errorf("KeyTooLongError %+v, want limit 255", kt)
	}
	tx := (*sql.Tx)(nil)
	_, err = tp.PublishTx(ctx, tx, msg("bad\xffkey", `{}`))
	ue := expectErr[*topic.InvalidUTF8Error](t, err, "an invalid UTF-8 key")
	if ue.Field != "key" || ue.Offset != 3 {
		t.Errorf("InvalidUTF8Error %+v, want field key at offset 3", ue)
	}
	_, err = tp.Publish(ctx, topic.Message{Key: "k", Type: "t", Payload: []byte("{\"a\":\"\xff\"}")})
	expectErr[*topic.InvalidUTF8Error](t, err, "an invalid UTF-8 payload")
	_, err = tp.Publish(ctx, topic.Message{Key: "k", Type: "t", Payload: []byte(`not json`)})
	expectErr[*topic.InvalidMessageError](t, err, "a payload that is not JSON")

	// On a live database: the longest key is stored exactly, and nothing
	// of a refused publish was stored.
	tp2, adv, _ := openCapture(t, env)
	max255 := strings.Repeat("é", topic.MaxKeyLength)
	_, err = tp2.Publish(ctx, msg(max255, `{"n":1}`))
	if err != nil {
		t.Fatalf("Publish with a 255-character key: %v", err)
	}
	if _, err := tp2.Publish(ctx, msg("a", `{}`), msg(long, `{}`)); !errors.Is(err, topic.ErrInvalidMessage) {
		t.Fatalf("publish with a 256-character key: %v", err)
	}
	most := strings.Repeat("😀", four)
	pos2, err := tp2.Publish(ctx, msg(most, `{"n":2}`))
	if err != nil {
		t.Fatalf("Publish with a key of %d four-byte characters (what EngineFacts.TextUnit says the column holds): %v", four, err)
	}
	advanceTopic(ctx, t, adv, tp2, pos2[0])
	got := readAllTopic(ctx, t, tp2, 0)
	if len(got) != 2 || got[0].Key != max255 || got[1].Key != most {
		t.Fatalf("read %d records (first key %d characters); want the 255-character key, then the %d four-byte one", len(got), len([]rune(keyOf(got))), four)
	}
}

func keyOf(rs []topic.Record) string {
	if len(rs) == 0 {
		return ""
	}
	return rs[0].Key
}

// testCaptureKeysExact: keys that differ in case or by a trailing space
// are different keys, stored and read as written.
func testCaptureKeysExact(t T, env *Env) {
	tp, adv, _ := openCapture(t, env)
	ctx, cancel := testtime.Context(context.Background(), 2*time.Minute)
	defer cancel()
	keys := []string{"acc-1", "ACC-1", "acc-1 ", "Straße", "strasse"}
	var ms []topic.Message
	for _, k := range keys {
		ms = append(ms, msg(k, `{}`))
	}
	pos, err := tp.Publish(ctx, ms...)
	if err != nil {
		t.Fatalf("Publish: %v", err)
	}
	advanceTopic(ctx, t, adv, tp, pos[len(pos)-1])
	got := readAllTopic(ctx, t, tp, 0)
	if len(got) != len(keys) {
		t.Fatalf("read %d records, want %d", len(got), len(keys))
	}
	for i, r := range got {
		if r.Key != keys[i] {
			t.Errorf("record %d key %q, want %q", i, r.Key, keys[i])
		}
	}
}

// testCapturePartitionKey: the partition is stamped at publish with the
// event store's FNV-1a, and a partition read returns that partition only.
func testCapturePartitionKey(t T, env *Env) {
	tp, adv, e := openCapture(t, env)
	ctx, cancel := testtime.Context(context.Background(), 2*time.Minute)
	defer cancel()
	var ms []topic.Message
	for i := range 24 {
		ms = append(ms, msg("key-"+string(rune('a'+i)), `{}`))
	}
	pos, err := tp.Publish(ctx, ms...)
	if err != nil {
		t.Fatalf("Publish: %v", err)
	}
	advanceTopic(ctx, t, adv, tp, pos[len(pos)-1])
	want := map[int]int{}
	for _, r := range readAllTopic(ctx, t, tp, 0) {
		p := topic.PartitionKey(r.Key, e.Partitions)
		if r.Partition != p {
			t.Errorf("key %q in partition %d, want %d", r.Key, r.Partition, p)
		}
		want[p]++
	}
	// The same partition as an aggregate id of that value in the event store.
	for _, k := range []string{"acc-1", "Straße", "key-z", ""} {
		if topic.PartitionKey(k, e.Partitions) != eventstore.PartitionKey(k, e.Partitions) {
			t.Errorf("PartitionKey(%q) = %d, the event store's is %d", k, topic.PartitionKey(k, e.Partitions), eventstore.PartitionKey(k, e.Partitions))
		}
	}
	for p := range e.Partitions {
		got, err := tp.ReadPartition(ctx, p, 0, 100)
		if err != nil {
			t.Fatalf("ReadPartition(%d): %v", p, err)
		}
		for _, r := range got {
			if r.Partition != p {
				t.Errorf("partition %d read returned a record of partition %d", p, r.Partition)
			}
		}
		if len(got) != want[p] {
			t.Errorf("partition %d: %d records, want %d", p, len(got), want[p])
		}
	}
}

// testCaptureOccurredAtUTC: occurred_at comes back in UTC, cut (never
// rounded) to the engine's declared digits, whatever the caller's zone.
func testCaptureOccurredAtUTC(t T, env *Env) {
	tp, adv, e := openCapture(t, env)
	ctx, cancel := testtime.Context(context.Background(), 2*time.Minute)
	defer cancel()
	zone := time.FixedZone("UTC+05:45", 5*3600+45*60)
	at := time.Date(2026, 3, 29, 1, 30, 15, 123456789, zone)
	m := msg("t", `{}`)
	m.OccurredAt = at
	pos, err := tp.Publish(ctx, m)
	if err != nil {
		t.Fatalf("Publish: %v", err)
	}
	advanceTopic(ctx, t, adv, tp, pos[0])
	got := readAllTopic(ctx, t, tp, 0)
	want := e.Cat.Facts.CutEventTime(at)
	if len(got) != 1 || !got[0].OccurredAt.Equal(want) || got[0].OccurredAt.Location() != time.UTC {
		t.Fatalf("occurred_at %v, want %v in UTC", got, want)
	}
}

// publishAged publishes n messages (one each) occurring age ago, and
// returns their positions.
func publishAged(ctx context.Context, t T, tp *topic.Topic, n int, age time.Duration) []int64 {
	t.Helper()
	var out []int64
	for range n {
		m := msg("k", `{}`)
		m.OccurredAt = time.Now().Add(-age)
		pos, err := tp.Publish(ctx, m)
		if err != nil {
			t.Fatalf("Publish: %v", err)
		}
		out = append(out, pos...)
	}
	return out
}

func testCaptureRetentionByAge(t T, env *Env) {
	tp, adv, _ := openCapture(t, env)
	ctx, cancel := testtime.Context(context.Background(), 2*time.Minute)
	defer cancel()
	old := publishAged(ctx, t, tp, 6, 3*time.Hour)
	young := publishAged(ctx, t, tp, 4, 0)
	advanceTopic(ctx, t, adv, tp, young[3])
	res, err := tp.Retain(ctx, topic.Retention{MaxAge: time.Hour})
	if err != nil {
		t.Fatalf("Retain: %v", err)
	}
	if res.Start != young[0]-1 || res.Start < old[5] || res.Deleted != 6 {
		t.Fatalf("retained %+v; want start %d (just below the first young message) and 6 deleted", res, young[0]-1)
	}
	if _, start, err := tp.Bounds(ctx); err != nil || start != res.Start {
		t.Fatalf("topic_start %d (%v), want %d recorded on the mark row", start, err, res.Start)
	}
	got := readAllTopic(ctx, t, tp, res.Start)
	if len(got) != 4 || got[0].Position != young[0] {
		t.Fatalf("after retention: %d records from %d, want the 4 young ones", len(got), firstPos(got))
	}
	// Idempotent: a second run deletes nothing more.
	if res2, err := tp.Retain(ctx, topic.Retention{MaxAge: time.Hour}); err != nil || res2.Deleted != 0 || res2.Start != res.Start {
		t.Fatalf("second run %+v, %v", res2, err)
	}
}

func firstPos(rs []topic.Record) int64 {
	if len(rs) == 0 {
		return 0
	}
	return rs[0].Position
}

func testCaptureRetentionBySize(t T, env *Env) {
	tp, adv, _ := openCapture(t, env)
	ctx, cancel := testtime.Context(context.Background(), 2*time.Minute)
	defer cancel()
	pos := publishAged(ctx, t, tp, 10, 0)
	// An unpublished tail (above the mark) is never counted nor deleted.
	advanceTopic(ctx, t, adv, tp, pos[9])
	res, err := tp.Retain(ctx, topic.Retention{MaxMessages: 3})
	if err != nil {
		t.Fatalf("Retain: %v", err)
	}
	if res.Start != pos[6] || res.Deleted != 7 {
		t.Fatalf("retained %+v; want start %d, 7 deleted", res, pos[6])
	}
	if got := readAllTopic(ctx, t, tp, res.Start); len(got) != 3 || got[0].Position != pos[7] {
		t.Fatalf("after retention: %d records from %d, want 3 from %d", len(got), firstPos(got), pos[7])
	}
}

// subscribe inserts a consumer and its checkpoint rows on the capture
// topic, one per partition with positions[p] (nil: NULL), as the consumer
// runtime records them; fewer positions than partitions leave the rest
// without a row.
func subscribe(ctx context.Context, t T, e *engine.Engine, name string, positions []any) {
	t.Helper()
	subscribeTo(ctx, t, e, topic.CaptureTopic, name, positions)
}

// subscribeTo is subscribe on source.
func subscribeTo(ctx context.Context, t T, e *engine.Engine, source, name string, positions []any) {
	t.Helper()
	id := uuid.NewString()
	col := positionColumn(e)
	if _, err := e.ExecText(ctx, e.DB, `INSERT INTO ${consumers_table} (id, consumer_type, consumer_name, state_since) VALUES (#{id}, #{type}, #{name}, #{since})`,
		nil, map[string]any{"id": id, "type": "projection", "name": name, "since": time.Now().UTC().Truncate(time.Second)}); err != nil {
		t.Fatalf("inserting consumer %s: %v", name, err)
	}
	for p, pos := range positions {
		if _, err := e.ExecText(ctx, e.DB, `INSERT INTO ${consumer_checkpoints_table} (consumer_id, source_name, partition_no, `+col+`) VALUES (#{id}, #{source}, #{part}, #{pos})`,
			nil, map[string]any{"id": id, "source": source, "part": p, "pos": pos}); err != nil {
			t.Fatalf("inserting checkpoint %s/%d: %v", name, p, err)
		}
	}
}

// positionColumn is CONSUMER_CHECKPOINTS.position quoted in the engine's
// case fold: POSITION is a reserved word on some engines (Firebird).
func positionColumn(e *engine.Engine) string {
	id := e.Cat.Identity
	name := "position"
	switch id.FoldsUnquotedTo {
	case "upper":
		name = strings.ToUpper(name)
	case "lower":
		name = strings.ToLower(name)
	}
	return id.QuoteOpen + name + id.QuoteClose
}

func checkpointsAt(n int, at int64) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = at
	}
	return out
}

// testCaptureRetentionCheckpoints: retention stops below the slowest
// checkpoint on the topic; a checkpoint row without a position, and a
// subscribed consumer missing a partition's row, hold the whole topic.
func testCaptureRetentionCheckpoints(t T, env *Env) {
	tp, adv, e := openCapture(t, env)
	ctx, cancel := testtime.Context(context.Background(), 2*time.Minute)
	defer cancel()
	pos := publishAged(ctx, t, tp, 10, 3*time.Hour)
	advanceTopic(ctx, t, adv, tp, pos[9])
	n := e.Partitions

	// A consumer with no position yet on one partition: nothing goes.
	empty := checkpointsAt(n, pos[9])
	empty[n-1] = nil
	subscribe(ctx, t, e, "empty-checkpoint", empty)
	if res, err := tp.Retain(ctx, topic.Retention{MaxAge: time.Hour}); err != nil || res.Deleted != 0 || res.Start != 0 || res.HeldAt != 0 || res.HeldBy != "projection/empty-checkpoint" || res.HeldByID == "" {
		t.Fatalf("with an empty checkpoint: %+v, %v; want nothing deleted, held at 0 by projection/empty-checkpoint", res, err)
	}
	if _, err := e.ExecText(ctx, e.DB, `UPDATE ${consumer_checkpoints_table} SET `+positionColumn(e)+` = #{pos} WHERE `+positionColumn(e)+` IS NULL`, nil, map[string]any{"pos": pos[9]}); err != nil {
		t.Fatal(err)
	}
	// A consumer with rows for some partitions only holds the rest.
	subscribe(ctx, t, e, "partial", checkpointsAt(n-1, pos[9]))
	if res, err := tp.Retain(ctx, topic.Retention{MaxAge: time.Hour}); err != nil || res.Deleted != 0 {
		t.Fatalf("with a partition without a checkpoint row: %+v, %v; want nothing deleted", res, err)
	}
	if _, err := e.ExecText(ctx, e.DB, `INSERT INTO ${consumer_checkpoints_table} (consumer_id, source_name, partition_no, `+positionColumn(e)+`) `+
		`SELECT consumer_id, source_name, #{part}, `+positionColumn(e)+` FROM ${consumer_checkpoints_table} WHERE partition_no = 0 AND consumer_id IN (SELECT id FROM ${consumers_table} WHERE consumer_name = #{name})`,
		nil, map[string]any{"part": n - 1, "name": "partial"}); err != nil {
		t.Fatal(err)
	}
	// The slowest checkpoint (one partition at pos[4]) keeps pos[4] and on.
	slow := checkpointsAt(n, pos[9])
	slow[1] = pos[4]
	subscribe(ctx, t, e, "slow", slow)
	res, err := tp.Retain(ctx, topic.Retention{MaxAge: time.Hour})
	if err != nil {
		t.Fatalf("Retain: %v", err)
	}
	if res.Start != pos[4]-1 || res.Deleted != 4 || res.HeldAt != pos[4] {
		t.Fatalf("retained %+v; want start %d (below the slowest checkpoint %d), 4 deleted", res, pos[4]-1, pos[4])
	}
	got := readAllTopic(ctx, t, tp, res.Start)
	if len(got) != 6 || got[0].Position != pos[4] {
		t.Fatalf("after retention: %d records from %d, want 6 from %d", len(got), firstPos(got), pos[4])
	}
	// A checkpoint on another source holds nothing here.
	if _, err := e.ExecText(ctx, e.DB, `UPDATE ${consumer_checkpoints_table} SET `+positionColumn(e)+` = #{pos}`, nil, map[string]any{"pos": pos[9]}); err != nil {
		t.Fatal(err)
	}
	if res, err := tp.Retain(ctx, topic.Retention{MaxAge: time.Hour}); err != nil || res.Start != pos[9]-1 {
		t.Fatalf("with every checkpoint at %d: %+v, %v; want start %d", pos[9], res, err, pos[9]-1)
	}
}

// testCaptureMissingHistory: a read, partition read or Follow after a
// position below topic_start is a *MissingHistoryError; at topic_start it
// has lost nothing.
func testCaptureMissingHistory(t T, env *Env) {
	tp, adv, _ := openCapture(t, env)
	ctx, cancel := testtime.Context(context.Background(), 2*time.Minute)
	defer cancel()
	pos := publishAged(ctx, t, tp, 5, 0)
	advanceTopic(ctx, t, adv, tp, pos[4])
	res, err := tp.Retain(ctx, topic.Retention{MaxMessages: 2})
	if err != nil || res.Start != pos[2] {
		t.Fatalf("Retain: %+v, %v; want start %d", res, err, pos[2])
	}
	_, err = tp.ReadTopic(ctx, 0, 10)
	mh := expectErr[*topic.MissingHistoryError](t, err, "ReadTopic below topic_start")
	if mh.Topic != topic.CaptureTopic || mh.Position != 0 || mh.TopicStart != pos[2] || !errors.Is(err, topic.ErrMissingHistory) {
		t.Errorf("MissingHistoryError %+v", mh)
	}
	_, err = tp.ReadPartition(ctx, 0, pos[2]-1, 10)
	expectErr[*topic.MissingHistoryError](t, err, "ReadPartition below topic_start")
	err = tp.Follow(ctx, pos[1], topic.FollowOptions{}, func(topic.Record) error { return nil })
	expectErr[*topic.MissingHistoryError](t, err, "Follow below topic_start")
	if got, err := tp.ReadTopic(ctx, pos[2], 10); err != nil || len(got) != 2 {
		t.Fatalf("ReadTopic at topic_start: %d records, %v; want 2", len(got), err)
	}
}
