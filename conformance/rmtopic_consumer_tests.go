package conformance

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"time"

	"github.com/tidemarkdb/tidemark/core/consumer"
	"github.com/tidemarkdb/tidemark/core/topic"
	"github.com/tidemarkdb/tidemark/internal/testtime"
)

// testRMTopicConsumer: a runner over a read-model topic
// (consumer.ReadModelTopic) applies each of its messages once, a key's in
// position order, with the records as published, and none of another
// topic's; its checkpoints are under the topic's source name.
func testRMTopicConsumer(t T, env *Env) {
	rig := openRMRig(t, env)
	ctx, cancel := testtime.Context(context.Background(), 2*time.Minute)
	defer cancel()
	tp, other := rig.open(ctx, t, "summary-consumed"), rig.open(ctx, t, "summary-ignored")
	keys := []string{"acc-1", "acc-2", "acc-3", "acc-4"}
	var pub []topic.Published
	var msgs []topic.ReadModelMessage
	for i := range 24 {
		m := rmMsg(keys[i%len(keys)], fmt.Sprintf(`{"i":%d}`, i))
		m.Deleted = i%7 == 6
		pub = append(pub, rig.publish(ctx, t, tp, m)...)
		msgs = append(msgs, m)
		if i%5 == 0 {
			rig.publish(ctx, t, other, rmMsg("acc-1", `{}`))
		}
	}
	rig.advance(ctx, t, tp, pub[len(pub)-1].Position)
	var mu sync.Mutex
	times := map[int64]int{}
	byKey := map[string][]int64{}
	values := map[int64]topic.ReadModelRecord{}
	h := func(_ context.Context, _ *sql.Tx, m consumer.Msg[topic.ReadModelRecord]) error {
		mu.Lock()
		defer mu.Unlock()
		if m.Source != tp.SourceName() {
			t.Errorf("message of source %s", m.Source)
		}
		times[m.Position]++
		byKey[m.Key] = append(byKey[m.Key], m.Position)
		values[m.Position] = m.Value
		return nil
	}
	reg := consumer.NewRegistry(rig.e, nil)
	r, err := consumer.NewRunner(ctx, reg, consumer.Options{Type: "projection", Name: "rm-consumer", Workers: 4, PageSize: 4,
		Routes: []consumer.Route{consumer.On(consumer.ReadModelTopic(tp, nil), h)}})
	if err != nil {
		t.Fatal(err)
	}
	pollUntil(t, r, func() bool { mu.Lock(); defer mu.Unlock(); return len(times) >= len(pub) })
	if c := mustConsumer(t, reg, r.Consumer().ID); c.State != consumer.Running {
		t.Fatalf("consumer %s (%s)", c.State, c.HaltReason)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(times) != len(pub) {
		t.Fatalf("applied %d positions, want %d", len(times), len(pub))
	}
	for i, p := range pub {
		v := values[p.Position]
		if times[p.Position] != 1 || v.ID != p.ID || v.Key != msgs[i].Key || string(v.Payload) != string(msgs[i].Payload) || v.Deleted != msgs[i].Deleted {
			t.Errorf("position %d applied %d times as %+v, want once as message %d", p.Position, times[p.Position], v, i)
		}
	}
	for _, k := range keys {
		var want []int64
		for i, p := range pub {
			if msgs[i].Key == k {
				want = append(want, p.Position)
			}
		}
		if fmt.Sprint(byKey[k]) != fmt.Sprint(want) {
			t.Errorf("key %s applied in order %v, want %v", k, byKey[k], want)
		}
	}
}
