package conformance

import (
	"context"
	"maps"
	"slices"
	"time"

	"github.com/tidemarkdb/tidemark/core/consumer"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/lease"
	"github.com/tidemarkdb/tidemark/internal/testtime"
)

// leaseStatusSetup is the lease state testLeaseOperatorStatus builds: A
// live, B lapsed, C stopped; what each holds as the coordinators saw it.
type leaseStatusSetup struct {
	a, b       *lease.Coordinator
	aOwn, bOwn map[int]int64
}

// testLeaseOperatorStatus: Operator.Status shows a consumer's leases as
// the lease package wrote them. Three coordinators spread the partitions;
// C stops (its leases free), A rebalances (takes some at generation 2, one
// stays free for B), B stops heartbeating until it lapses on the database
// clock. Status lists A live with its partitions and generations, B lapsed
// with its own, the free partitions, and a consumer without lease rows as
// not leased. After A's next rebalance B is gone and A holds everything.
func testLeaseOperatorStatus(t T, env *Env) {
	e := openEngine(t, env, defaultConfig(env))
	ctx, cancel := testtime.Context(context.Background(), 2*time.Minute) // a hang guard
	defer cancel()
	reg := consumer.NewRegistry(e, nil)
	op := reg.Operator()
	leased := consumer.Ref{Type: "projection", Name: "leased"}
	plain := consumer.Ref{Type: "projection", Name: "plain"}
	for _, r := range []consumer.Ref{leased, plain} {
		if _, err := reg.Subscribe(ctx, r.Type, r.Name, consumer.SourceRef{Name: engine.EventStoreTopic, Partitions: e.Partitions}); err != nil {
			t.Fatalf("subscribe %s: %v", r, err)
		}
	}
	st, err := op.Status(ctx, plain)
	if err != nil {
		t.Fatal(err)
	}
	if st.Leases == nil || st.Leases.Leased || len(st.Leases.Instances)+len(st.Leases.Free) != 0 {
		t.Fatalf("a consumer without lease rows: leases %+v, want not leased", st.Leases)
	}

	s := leaseStatusScenario(ctx, t, e, leased, e.Partitions)
	st, err = op.Status(ctx, leased)
	if err != nil {
		t.Fatal(err)
	}
	v := st.Leases
	if v == nil || !v.Leased || len(v.Instances) != 2 {
		t.Fatalf("leases %+v, want leased with instances A and B (C stopped)", v)
	}
	byID := map[string]consumer.LeaseInstance{}
	for _, in := range v.Instances {
		byID[in.ID] = in
	}
	checkLeaseInstance(t, "A", byID[s.a.InstanceID()], consumer.InstanceLive, s.aOwn, lease.DefaultLeaseDuration)
	checkLeaseInstance(t, "B", byID[s.b.InstanceID()], consumer.InstanceLapsed, s.bOwn, 2*time.Second)
	if !slices.Contains(slices.Collect(maps.Values(s.aOwn)), 2) {
		t.Errorf("A took none of C's released leases (raising the generation to 2): %v", s.aOwn)
	}
	if len(v.Free) == 0 {
		t.Errorf("no free partition: C released its leases and B never rebalanced to take its share")
	}
	for _, f := range v.Free {
		_, inA := s.aOwn[f.Partition]
		_, inB := s.bOwn[f.Partition]
		if inA || inB || f.Generation != 1 {
			t.Errorf("free partition %+v: held by A %v or B %v, or not at C's generation 1", f, inA, inB)
		}
	}
	if n := len(s.aOwn) + len(s.bOwn) + len(v.Free); n != e.Partitions {
		t.Errorf("A %d + B %d + free %d partitions, want all %d", len(s.aOwn), len(s.bOwn), len(v.Free), e.Partitions)
	}

	// A's next rebalance purges B and takes every partition.
	if err := s.a.Heartbeat(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.a.Rebalance(ctx); err != nil {
		t.Fatal(err)
	}
	st, err = op.Status(ctx, leased)
	if err != nil {
		t.Fatal(err)
	}
	if v := st.Leases; len(v.Instances) != 1 || v.Instances[0].ID != s.a.InstanceID() || len(v.Instances[0].Partitions) != e.Partitions || len(v.Free) != 0 {
		t.Errorf("after A's rebalance: %+v, want A alone holding all %d partitions", v, e.Partitions)
	}
	_ = s.a.Stop(ctx)
}

// leaseStatusScenario builds the state testLeaseOperatorStatus reads (see
// there) for consumer ref over n partitions.
func leaseStatusScenario(ctx context.Context, t T, e *engine.Engine, ref consumer.Ref, n int) leaseStatusSetup {
	t.Helper()
	newCo := func(o lease.Options) *lease.Coordinator {
		o.Logger = quietLogger()
		co, err := lease.New(e, o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = co.Stop(context.Background()) })
		return co
	}
	// B's lease is 2 s: long enough to stay live through A's rebalance on a
	// loaded machine, short enough to wait for its lapse.
	a, b, c := newCo(lease.Options{}), newCo(lease.Options{HeartbeatInterval: 500 * time.Millisecond, LeaseDuration: 2 * time.Second}), newCo(lease.Options{})
	members := map[*lease.Coordinator]*lease.Member{}
	for _, co := range []*lease.Coordinator{a, b, c} {
		m, err := co.Join(ctx, lease.ConsumerOptions{Type: ref.Type, Name: ref.Name, Partitions: n})
		if err != nil {
			t.Fatal(err)
		}
		members[co] = m
	}
	for _, co := range []*lease.Coordinator{a, b, c} {
		if err := co.Rebalance(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if err := b.Heartbeat(ctx); err != nil {
		t.Fatal(err)
	}
	if err := a.Rebalance(ctx); err != nil {
		t.Fatal(err)
	}
	s := leaseStatusSetup{a: a, b: b, aOwn: members[a].Owned(), bOwn: members[b].Owned()}
	if len(s.bOwn) == 0 {
		t.Fatalf("B holds nothing after the rebalances (lapsed early?): A %v", s.aOwn)
	}
	for { // B lapses on the database clock; A stays live
		if err := a.Heartbeat(ctx); err != nil {
			t.Fatal(err)
		}
		live, err := liveInstances(ctx, e)
		if err != nil {
			t.Fatal(err)
		}
		if l, ok := live[b.InstanceID()]; ok && !l {
			return s
		}
		select {
		case <-ctx.Done():
			t.Fatalf("instance B never lapsed")
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// checkLeaseInstance compares one instance of the view with what its
// coordinator holds.
func checkLeaseInstance(t T, label string, in consumer.LeaseInstance, state consumer.InstanceState, owned map[int]int64, lease time.Duration) {
	t.Helper()
	if in.State != state || !in.Member {
		t.Errorf("instance %s (%s): state %q member %v, want %q and a member", label, in.ID, in.State, in.Member, state)
	}
	got := map[int]int64{}
	for _, p := range in.Partitions {
		got[p.Partition] = p.Generation
	}
	if !maps.Equal(got, owned) {
		t.Errorf("instance %s: partitions@generations %v, its coordinator holds %v", label, got, owned)
	}
	if in.StartedAt == nil || in.LastHeartbeat == nil || in.ExpiresAt == nil {
		t.Fatalf("instance %s: times %v %v %v, want all three", label, in.StartedAt, in.LastHeartbeat, in.ExpiresAt)
	}
	// Both were written by one statement from the database clock: expiry is
	// the heartbeat plus the lease duration (a second of slack for clocks
	// read twice within the statement and the column's precision).
	if d := in.ExpiresAt.Sub(*in.LastHeartbeat); d < lease-time.Second || d > lease+time.Second || in.LastHeartbeat.Before(*in.StartedAt) {
		t.Errorf("instance %s: started %s, last heartbeat %s, expires %s: want expiry = heartbeat + %s", label, in.StartedAt, in.LastHeartbeat, in.ExpiresAt, lease)
	}
}
