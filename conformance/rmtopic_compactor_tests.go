package conformance

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/tidemarkdb/tidemark/core/topic"
	"github.com/tidemarkdb/tidemark/internal/testtime"
)

// compactedThrough reads tp's TOPIC_COMPACTION row (-1 when it has none).
func compactedThrough(ctx context.Context, t T, rig *rmRig, tp *topic.ReadModelTopic) int64 {
	t.Helper()
	c, err := rig.e.CompileText(`SELECT compacted_through FROM ${topic_compaction_table} WHERE topic_name = #{topic}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	args, err := c.Args(map[string]any{"topic": tp.SourceName()})
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	if err := rig.e.DB.QueryRowContext(ctx, c.SQL, args...).Scan(&n); err != nil {
		return -1
	}
	return n
}

// publishSuperseded publishes rounds states of each of keys keys on tp and
// moves the mark past them; it returns the last position.
func publishSuperseded(ctx context.Context, t T, rig *rmRig, tp *topic.ReadModelTopic, keys, rounds int) int64 {
	t.Helper()
	var last int64
	for i := range keys * rounds {
		p := rig.publish(ctx, t, tp, rmMsg(fmt.Sprintf("acc-%d", i%keys), fmt.Sprintf(`{"v":%d}`, i)))
		last = p[0].Position
	}
	rig.advance(ctx, t, tp, last)
	return last
}

// compactorLease outlasts any gap between a held compactor's renewals (it
// renews every 10 ms) under load, and ends within the test when a
// stopping compactor's release is lost (its 2 s bound passed on a loaded
// machine): the next holder then takes the row when the lease lapses, as
// a real one would. An hour-long lease hung the test on a lost release.
const compactorLease = 30 * time.Second

// startCompactor runs a compactor of tp (owner, compactorLease)
// until the returned stop; each compaction it runs is sent on the
// returned channel (while it has room).
func startCompactor(t T, tp *topic.ReadModelTopic, owner string) (<-chan error, func()) {
	t.Helper()
	runs := make(chan error, 1000)
	c, err := topic.NewCompactor(tp, topic.CompactorOptions{Interval: 10 * time.Millisecond, Lease: compactorLease, Owner: owner,
		OnCompact: func(_ topic.Compacted, err error) {
			select {
			case runs <- err:
			default: // the test has seen enough; never block the compactor
			}
		}})
	if err != nil {
		t.Fatalf("NewCompactor: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("compactor %s: %v", owner, err)
			}
		})
	}
	t.Cleanup(stop)
	return runs, stop
}

// testRMTopicCompactorScheduled: a Compactor compacts on its own schedule
// (the test never calls Compact): superseded messages go and
// TOPIC_COMPACTION's progress follows the mark, again after newer
// messages. A second compactor of the topic runs nothing while the first
// holds the lease, and takes over once the first stops.
func testRMTopicCompactorScheduled(t T, env *Env) {
	rig := openRMRig(t, env)
	ctx, cancel := testtime.Context(context.Background(), 2*time.Minute)
	defer cancel()
	tp := rig.open(ctx, t, "summary-scheduled")
	last := publishSuperseded(ctx, t, rig, tp, 4, 3)
	first, stopFirst := startCompactor(t, tp, "compactor-a")
	if err := <-first; err != nil {
		t.Fatalf("the first scheduled compaction: %v", err)
	}
	second, _ := startCompactor(t, tp, "compactor-b")
	waitFor(t, "superseded messages compacted", func() bool { return len(readAllRM(ctx, t, tp)) == 4 })
	if got := compactedThrough(ctx, t, rig, tp); got < last {
		t.Errorf("TOPIC_COMPACTION at %d after the scheduled compaction, want at least %d", got, last)
	}
	newer := publishSuperseded(ctx, t, rig, tp, 4, 1)
	waitFor(t, "the newer states' predecessors compacted", func() bool {
		rs := readAllRM(ctx, t, tp)
		return len(rs) == 4 && compactedThrough(ctx, t, rig, tp) >= newer
	})
	for _, r := range readAllRM(ctx, t, tp) {
		if r.Position <= last {
			t.Errorf("key %s kept position %d, superseded by a newer state", r.Key, r.Position)
		}
	}
	for range 3 { // the first renews its lease and compacts again
		if err := <-first; err != nil {
			t.Fatalf("a scheduled compaction: %v", err)
		}
	}
	if n := len(second); n != 0 {
		t.Errorf("the second compactor ran %d compactions while the first held the lease", n)
	}
	stopFirst()
	if err := <-second; err != nil && !errors.Is(err, context.Canceled) {
		t.Fatalf("the second compactor after the first stopped: %v", err)
	}
}

// testRMTopicConcurrentCompactions: two Compacts of one topic at once,
// its first included (both would insert the TOPIC_COMPACTION row), both
// succeed and leave what one leaves: the latest message of each key and
// the progress at the mark. Five fresh topics, each compacted by two
// goroutines released together.
func testRMTopicConcurrentCompactions(t T, env *Env) {
	rig := openRMRig(t, env)
	ctx, cancel := testtime.Context(context.Background(), 2*time.Minute)
	defer cancel()
	for round := range 5 {
		tp := rig.open(ctx, t, fmt.Sprintf("summary-concurrent-%d", round))
		last := publishSuperseded(ctx, t, rig, tp, 4, 3)
		want := latestByKey(readAllRM(ctx, t, tp))
		start := make(chan struct{})
		errs := make(chan error, 2)
		for range 2 {
			go func() {
				<-start
				_, err := tp.Compact(ctx, topic.CompactOptions{})
				errs <- err
			}()
		}
		close(start)
		for range 2 {
			if err := <-errs; err != nil {
				t.Fatalf("round %d: a concurrent Compact: %v", round, err)
			}
		}
		got := readAllRM(ctx, t, tp)
		if len(got) != 4 {
			t.Fatalf("round %d: %d messages after two compactions, want 4 (one per key)", round, len(got))
		}
		for _, r := range got {
			if r.ID != want[r.Key].ID {
				t.Errorf("round %d: key %s kept %s, want its latest %s", round, r.Key, r.ID, want[r.Key].ID)
			}
		}
		if through := compactedThrough(ctx, t, rig, tp); through < last {
			t.Errorf("round %d: TOPIC_COMPACTION at %d, want the mark (at least %d)", round, through, last)
		}
	}
}
