package conformance

import (
	"context"
	"fmt"
	"time"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/hwm"
	"github.com/tidemarkdb/tidemark/core/topic"
	"github.com/tidemarkdb/tidemark/internal/sqlcount"
	"github.com/tidemarkdb/tidemark/internal/testtime"
)

// testCapturePublishBatchStatements publishes 1,200 messages in one call on
// a counting connection: they go out as multi-row inserts of the dialect's
// capture insert (as many statements as its MaxRows needs, plus the
// position reservation), each message at the position the publish returned
// for it, in order.
func testCapturePublishBatchStatements(t T, env *Env) {
	counts := sqlcount.Counts{}
	e := countedEngine(t, env, defaultConfig(env), &counts)
	ctx, cancel := testtime.Context(context.Background(), 5*time.Minute)
	defer cancel()
	tp, err := topic.New(ctx, e)
	if err != nil {
		t.Fatalf("topic.New: %v", err)
	}
	adv := tp.Advancer(hwm.Options{PollInterval: 10 * time.Millisecond})
	const n = 1200
	msgs := make([]topic.Message, n)
	for i := range msgs {
		msgs[i] = msg(fmt.Sprintf("k-%d", i%37), fmt.Sprintf(`{"n":%d}`, i))
	}
	per := e.NewInsert("capture insert", e.Cat.CaptureInsert, dialect.CaptureInsertBinds).MaxRows(engine.InsertShape{})
	before := counts.Statements.Load()
	pos, err := tp.Publish(ctx, msgs...)
	if err != nil {
		t.Fatalf("Publish of %d messages: %v", n, err)
	}
	// The reservation (or the drawn insert's transaction id) takes at most
	// three statements besides the inserts.
	inserts := (n + per - 1) / per
	if got := counts.Statements.Load() - before; got > int64(inserts+3) {
		t.Errorf("publishing %d messages sent %d statements, want at most %d (%d rows per insert) + 3", n, got, inserts, per)
	}
	if len(pos) != n {
		t.Fatalf("%d positions for %d messages", len(pos), n)
	}
	for i := 1; i < n; i++ {
		if pos[i] <= pos[i-1] {
			t.Fatalf("positions %d and %d: %d then %d, want ascending", i-1, i, pos[i-1], pos[i])
		}
	}
	advanceTopic(ctx, t, adv, tp, pos[n-1])
	got := readAllTopic(ctx, t, tp, 0)
	if len(got) != n {
		t.Fatalf("read %d records, want %d", len(got), n)
	}
	for i, r := range got {
		if want := fmt.Sprintf(`{"n":%d}`, i); r.Position != pos[i] || string(r.Payload) != want {
			t.Fatalf("record %d: position %d payload %s, want %d %s", i, r.Position, r.Payload, pos[i], want)
		}
		if r.Partition != topic.PartitionKey(msgs[i].Key, e.Partitions) {
			t.Fatalf("record %d in partition %d, want %d", i, r.Partition, topic.PartitionKey(msgs[i].Key, e.Partitions))
		}
	}
}
