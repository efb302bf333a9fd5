package conformance

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tidemarkdb/tidemark/core/consumer"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/eventstore"
	"github.com/tidemarkdb/tidemark/core/lease"
	"github.com/tidemarkdb/tidemark/internal/testtime"
)

// The consumer runner with partition leases (Options.Leases), with
// separate OS processes (consumer_lease_workers.go): the partitions spread
// over the instances within the bound and each instance applies only what
// it holds; a killed instance's partitions move and every position is
// applied once; a paused instance's apply rolls back after a takeover; an
// unsubscribe removes the lease rows.

func createLeaseApplied(t T, db *sql.DB) {
	t.Helper()
	if _, err := db.Exec(`CREATE TABLE ` + leaseAppliedTable + ` (pos BIGINT NOT NULL, pno INT NOT NULL, instance_id VARCHAR(64) NOT NULL, generation BIGINT NOT NULL)`); err != nil {
		t.Fatalf("creating %s: %v", leaseAppliedTable, err)
	}
}

// leaseApplied is one row of leaseAppliedTable.
type leaseApplied struct {
	pos        int64
	partition  int
	instance   string
	generation int64
}

func readLeaseApplied(ctx context.Context, db *sql.DB) ([]leaseApplied, error) {
	rows, err := db.QueryContext(ctx, `SELECT pos, pno, instance_id, generation FROM `+leaseAppliedTable)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []leaseApplied
	for rows.Next() {
		var a leaseApplied
		if err := rows.Scan(&a.pos, &a.partition, &a.instance, &a.generation); err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

// distinctApplied is how many distinct positions were applied (-1 on a
// read error: not yet).
func distinctApplied(ctx context.Context, db *sql.DB) int {
	rows, err := readLeaseApplied(ctx, db)
	if err != nil {
		return -1
	}
	seen := map[int64]bool{}
	for _, r := range rows {
		seen[r.pos] = true
	}
	return len(seen)
}

// awaitEnd waits until the worker's process has ended (its output closed).
func awaitEnd(ctx context.Context, t T, lw *liveWorker, what string) {
	t.Helper()
	for {
		select {
		case _, ok := <-lw.lines:
			if !ok {
				return
			}
		case <-ctx.Done():
			t.Fatalf("waiting for %s to end: %v", what, ctx.Err())
		}
	}
}

// checkAppliedOnceUnderLeases checks that every position was applied once
// and each under a lease the applying instance held: generation 1 or more,
// and one instance per partition and generation.
func checkAppliedOnceUnderLeases(t T, rows []leaseApplied, positions []int64) {
	t.Helper()
	count := map[int64]int{}
	holder := map[[2]int64]string{}
	for _, r := range rows {
		count[r.pos]++
		if r.generation < 1 {
			t.Errorf("position %d (partition %d) applied by %s without a lease (generation %d)", r.pos, r.partition, r.instance, r.generation)
			continue
		}
		k := [2]int64{int64(r.partition), r.generation}
		if h, ok := holder[k]; ok && h != r.instance {
			t.Errorf("partition %d generation %d applied by two instances, %s and %s", r.partition, r.generation, h, r.instance)
		}
		holder[k] = r.instance
	}
	for _, p := range positions {
		if count[p] != 1 {
			t.Errorf("position %d applied %d times, want once", p, count[p])
		}
	}
	if len(count) != len(positions) {
		t.Errorf("%d positions applied, want %d", len(count), len(positions))
	}
}

// testConsumerLeasesSpreadKill: three instances (OS processes) run one
// Transactional consumer over 16 partitions with leases: the partitions
// spread within the bound (at most ⌈16/3⌉ = 6 each, read from
// PARTITION_OWNERSHIP) before any apply; one is killed with SIGKILL in the
// middle of an apply; the two others take its partitions (8/8) and every
// position is applied exactly once, each under a lease of the instance
// that applied it.
func testConsumerLeasesSpreadKill(t T, env *Env) {
	cfg := defaultConfig(env)
	cfg.Partitions = 16
	e := openEngine(t, env, cfg)
	s := eventstore.New(e, nil)
	createLeaseApplied(t, env.DB)
	var keys []string
	for i := range 48 {
		keys = append(keys, fmt.Sprintf("l-%d", i))
	}
	positions := appendSpread(t, s, e, keys, 320)
	ctx, cancel := testtime.Context(context.Background(), 4*time.Minute)
	defer cancel()
	const parts = 16
	var ws []*liveWorker
	var ids []string
	for i := range 3 {
		args := leasedArgs{Consumer: "spread"}
		if i == 2 {
			args.KillAfter, args.OthersFirst = 3, 20
		}
		w := startLive(ctx, t, leasedJob(env, cfg, args))
		ws = append(ws, w)
		ids = append(ids, strings.TrimPrefix(w.expect(ctx, t, "joined "), "joined "))
	}
	waitLeases(ctx, t, e, "spread", "16 partitions over 3 instances within the bound", func(st []lease.PartitionLease) bool { return spreadOver(st, parts, ids) })
	for _, w := range ws {
		w.send(t, "go")
	}
	awaitEnd(ctx, t, ws[2], "the instance killed mid-apply")
	waitLeases(ctx, t, e, "spread", "the killed instance's partitions taken over", func(st []lease.PartitionLease) bool { return spreadOver(st, parts, ids[:2]) })
	waitRows(ctx, t, e, "every position applied", func() bool { return distinctApplied(ctx, env.DB) == len(positions) })
	for _, w := range ws[:2] {
		w.send(t, "stop")
	}
	for _, w := range ws[:2] {
		if r := w.result(ctx, t); !r.OK {
			t.Fatalf("a surviving instance failed: %s %s", r.ErrorKind, r.Error)
		}
	}
	rows, err := readLeaseApplied(ctx, env.DB)
	if err != nil {
		t.Fatal(err)
	}
	checkAppliedOnceUnderLeases(t, rows, positions)
	st, err := lease.Status(ctx, e, "projection", "spread")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range st {
		if l.Owner != "" {
			t.Errorf("after the graceful stops partition %d is still held by %s", l.Partition, l.Owner)
		}
	}
}

// testConsumerLeasesPausedApply: an instance (an OS process) is stopped
// with SIGSTOP inside the handler of an apply, after its insert; it lapses
// and a second instance takes its partitions over and applies the
// position. Resumed, the paused apply is fenced off (ErrLeaseLost) and
// rolls back: the position is applied once, by the second instance, under
// a higher generation. Where the engine serialises writers the paused
// apply holds the database's one write lock, so no other instance could
// take over while it is stopped: the test does not apply there.
func testConsumerLeasesPausedApply(t T, env *Env) {
	if env.Catalogue.Locks.SerializesWriters {
		skipf(t, "the engine serialises writers (Locks.SerializesWriters): an apply stopped in its transaction holds the one write lock, so no instance can take over until it resumes")
	}
	s, e := openStore(t, env)
	createLeaseApplied(t, env.DB)
	var keys []string
	for i := range 8 {
		keys = append(keys, fmt.Sprintf("p-%d", i))
	}
	positions := appendSpread(t, s, e, keys, 24)
	ctx, cancel := testtime.Context(context.Background(), 4*time.Minute)
	defer cancel()
	// The second instance opens its engine first (schema DDL waits for open
	// transactions on some engines); it joins the consumer on "go".
	taker := startLive(ctx, t, leasedJob(env, defaultConfig(env), leasedArgs{Consumer: "paused", JoinOnGo: true}))
	takerID := strings.TrimPrefix(taker.expect(ctx, t, "joined "), "joined ")
	paused := startLive(ctx, t, leasedJob(env, defaultConfig(env), leasedArgs{Consumer: "paused", PauseKey: "pause-me"}))
	pausedID := strings.TrimPrefix(paused.expect(ctx, t, "joined "), "joined ")
	paused.send(t, "go")
	waitRows(ctx, t, e, "the first instance applied every position", func() bool { return distinctApplied(ctx, env.DB) == len(positions) })
	res := appendAndPublish(t, s, e, eventstore.Stream{AggregateType: "test.Account", AggregateID: "pause-me", Events: []eventstore.Event{ev("test.E", `{}`)}})
	pos := res.Positions[0]
	var inApply, gen int64
	fmt.Sscanf(paused.expect(ctx, t, "in-apply "), "in-apply %d %d", &inApply, &gen)
	if inApply != pos || gen < 1 {
		t.Fatalf("the paused apply is of position %d under generation %d, want %d under a lease", inApply, gen, pos)
	}
	paused.signal(t, syscall.SIGSTOP)
	taker.send(t, "go")
	waitRows(ctx, t, e, "the second instance applied the paused position", func() bool {
		rows, err := readLeaseApplied(ctx, env.DB)
		for _, r := range rows {
			if err == nil && r.pos == pos && r.instance == takerID {
				return true
			}
		}
		return false
	})
	paused.signal(t, syscall.SIGCONT)
	paused.send(t, "release")
	paused.send(t, "stop")
	checkLeasedResult(ctx, t, paused, "the paused instance", func(r leasedResult) {
		if r.Lost < 1 {
			t.Errorf("the resumed instance %s's apply of position %d under generation %d was not fenced off (no ErrLeaseLost)", pausedID, pos, gen)
		}
	})
	taker.send(t, "stop")
	checkLeasedResult(ctx, t, taker, "the taking instance", func(leasedResult) {})
	rows, err := readLeaseApplied(ctx, env.DB)
	if err != nil {
		t.Fatal(err)
	}
	checkAppliedOnceUnderLeases(t, rows, append(positions, pos))
	for _, r := range rows {
		if r.pos == pos && (r.instance != takerID || r.generation <= gen) {
			t.Errorf("position %d committed by %s under generation %d, want only the taking instance %s above generation %d", pos, r.instance, r.generation, takerID, gen)
		}
	}
}

func checkLeasedResult(ctx context.Context, t T, lw *liveWorker, what string, check func(leasedResult)) {
	t.Helper()
	r := lw.result(ctx, t)
	if !r.OK {
		t.Fatalf("%s failed: %s %s", what, r.ErrorKind, r.Error)
	}
	var res leasedResult
	if err := json.Unmarshal(r.Data, &res); err != nil {
		t.Fatal(err)
	}
	check(res)
}

// testConsumerLeasesUnsubscribe: a runner with leases joins the
// coordinator and claims its partitions; unsubscribing the consumer from
// its last source deletes its ownership and membership rows in the
// unsubscribe's transaction, and only its own; unsubscribing from a source
// while checkpoints remain keeps them. A distribution without leases, or an
// unknown one, is refused before any SQL.
func testConsumerLeasesUnsubscribe(t T, env *Env) {
	s, e := openStore(t, env)
	ctx := context.Background()
	reg := consumer.NewRegistry(e, nil)
	co, err := lease.New(e, lease.Options{Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer co.Stop(ctx)
	opts := func(name string) consumer.Options {
		return consumer.Options{Type: "projection", Name: name, Leases: co,
			Routes: []consumer.Route{consumer.On(consumer.EventStore(s, nil), func(context.Context, *sql.Tx, consumer.Msg[eventstore.Recorded]) error { return nil })}}
	}
	bad := opts("bad")
	bad.Leases, bad.Distribution = nil, lease.SingleOwner
	if _, err := consumer.NewRunner(ctx, reg, bad); !errors.Is(err, consumer.ErrInvalidOptions) {
		t.Errorf("a single-owner distribution without leases: want ErrInvalidOptions, got %v", err)
	}
	bad = opts("bad")
	bad.Distribution = "round-robin"
	if _, err := consumer.NewRunner(ctx, reg, bad); !errors.Is(err, consumer.ErrInvalidOptions) {
		t.Errorf("an unknown distribution: want ErrInvalidOptions, got %v", err)
	}
	for _, name := range []string{"leaving", "staying"} {
		if _, err := consumer.NewRunner(ctx, reg, opts(name)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := reg.Subscribe(ctx, "projection", "staying", consumer.SourceRef{Name: "extra", Partitions: 2}); err != nil {
		t.Fatal(err)
	}
	if err := co.Rebalance(ctx); err != nil {
		t.Fatal(err)
	}
	leases := func(name string) int {
		st, err := lease.Status(ctx, e, "projection", name)
		if err != nil {
			t.Fatal(err)
		}
		return len(st)
	}
	if leases("leaving") != e.Partitions || leases("staying") != e.Partitions || rowCount(t, e, "partition_members_table") != 2 {
		t.Fatalf("before unsubscribing: %d and %d leases, %d members; want %d, %d, 2", leases("leaving"), leases("staying"), rowCount(t, e, "partition_members_table"), e.Partitions, e.Partitions)
	}
	ch, err := reg.Operator().Unsubscribe(ctx, consumer.Ref{Type: "projection", Name: "staying"}, "extra")
	if err != nil || ch.ConsumerDeleted || leases("staying") != e.Partitions {
		t.Errorf("unsubscribing from one of two sources: %v, consumer deleted %v, %d leases left; want its leases kept", err, ch.ConsumerDeleted, leases("staying"))
	}
	ch, err = reg.Operator().Unsubscribe(ctx, consumer.Ref{Type: "projection", Name: "leaving"}, engine.EventStoreTopic)
	if err != nil || !ch.ConsumerDeleted {
		t.Fatalf("unsubscribing from the last source: %v (consumer deleted %v)", err, ch.ConsumerDeleted)
	}
	if n := leases("leaving"); n != 0 {
		t.Errorf("after the last unsubscribe %d ownership rows of the consumer remain", n)
	}
	if n := rowCount(t, e, "partition_members_table"); n != 1 {
		t.Errorf("after the last unsubscribe %d membership rows remain, want only the other consumer's", n)
	}
	if n := leases("staying"); n != e.Partitions {
		t.Errorf("the other consumer's leases: %d rows, want %d", n, e.Partitions)
	}
}

// testConsumerLeasesNonTransactional: a non-transactional runner with
// leases applies nothing while its instance holds no partition, then,
// once the coordinator claimed them, every message with the generation of
// its partition's lease (the handler's fencing token) and saves the
// checkpoints.
func testConsumerLeasesNonTransactional(t T, env *Env) {
	s, e := openStore(t, env)
	ctx := context.Background()
	var keys []string
	for i := range 8 {
		keys = append(keys, fmt.Sprintf("n-%d", i))
	}
	positions := appendSpread(t, s, e, keys, 16)
	co, err := lease.New(e, lease.Options{Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer co.Stop(ctx)
	var mu sync.Mutex
	got := map[int64]consumer.Msg[eventstore.Recorded]{}
	r, err := consumer.NewRunner(ctx, consumer.NewRegistry(e, nil), consumer.Options{Type: "projection", Name: "plain", Leases: co,
		Logger: quietLogger(),
		Routes: []consumer.Route{consumer.On(consumer.EventStore(s, nil), func(_ context.Context, _ *sql.Tx, m consumer.Msg[eventstore.Recorded]) error {
			mu.Lock()
			defer mu.Unlock()
			got[m.Position] = m
			return nil
		})}})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := r.Poll(ctx); err != nil || n != 0 {
		t.Fatalf("a poll holding no lease applied %d messages (%v), want none", n, err)
	}
	if err := co.Rebalance(ctx); err != nil {
		t.Fatal(err)
	}
	pollUntil(t, r, func() bool { mu.Lock(); defer mu.Unlock(); return len(got) == len(positions) })
	st, err := lease.Status(ctx, e, "projection", "plain")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range got {
		if m.Partition >= len(st) || m.Generation != st[m.Partition].Generation || m.Generation < 1 {
			t.Errorf("position %d of partition %d applied under generation %d; the lease: %+v", m.Position, m.Partition, m.Generation, st)
		}
	}
}
