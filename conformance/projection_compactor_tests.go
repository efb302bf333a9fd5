package conformance

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/tidemarkdb/tidemark/core/hwm"
	"github.com/tidemarkdb/tidemark/core/projection"
	"github.com/tidemarkdb/tidemark/core/topic"
)

// testProjectionRunnerCompacts: a projection's runner compacts its
// read-model topic on its own schedule (Compaction, here every 10 ms; the
// test never calls Compact): the superseded states of each read model go,
// its latest state stays, and the read models are untouched. A runner that
// did not compact would leave every state, and the wait would meet its
// guard.
func testProjectionRunnerCompacts(t T, env *Env) {
	r := newProjRig(t, env)
	// Compaction deletes below the topic's mark: on PostgreSQL the
	// read-model topics' mark is advanced by its advancer.
	actx, stop := context.WithCancel(context.Background())
	t.Cleanup(stop)
	if adv := topic.ReadModelAdvancer(r.e, hwm.Options{PollInterval: 10 * time.Millisecond}); adv != nil {
		go func() { _ = adv.Run(actx) }()
	}
	r.st.SetCompaction(projection.Compaction{CompactorOptions: topic.CompactorOptions{Interval: 10 * time.Millisecond}})
	r.run(t, nil)
	ids := []string{"c-" + newID(t), "c-" + newID(t)}
	const rounds = 3
	for i := range rounds {
		for _, id := range ids {
			r.append(t, "bank.Account", id, projDeposited{fmt.Sprint(i + 1)})
		}
	}
	for _, id := range ids {
		r.waitDeposits(t, id, rounds)
	}
	ctx := context.Background()
	waitForOr(t, "the runner compacting the superseded states", func() bool {
		return len(readAllRM(ctx, t, r.st.Topic())) == len(ids)
	}, func() string { return fmt.Sprintf("%d messages on the topic", len(readAllRM(ctx, t, r.st.Topic()))) })
	for _, m := range readAllRM(ctx, t, r.st.Topic()) {
		v, ok, err := r.st.Get(ctx, m.Key)
		if err != nil || !ok {
			t.Fatalf("Get(%s) after compaction: %v, found %v", m.Key, err, ok)
		}
		if v.Deposits != rounds || strings.TrimRight(strings.TrimRight(v.Balance, "0"), ".") != "6" {
			t.Errorf("read model %s after compaction: %+v, want %d deposits, balance 6", m.Key, v, rounds)
		}
	}
}
