package lease

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/stmt"
)

// ConsumerOptions is a consumer joining the coordinator.
type ConsumerOptions struct {
	// Type and Name are the consumer's, as in its checkpoints (e.g.
	// "projection", "account-summary").
	Type, Name string
	// Partitions is the consumer's partition count; the engine's by default.
	Partitions int
	// Distribution is Spread (default) or SingleOwner.
	Distribution Distribution
	// OnChange, optional, is called after every rebalance (and lapse or
	// stop) that changed what this instance owns; it must not block long.
	OnChange func(Change)
	// OnRevoke, optional, is the cooperative handover of partitions a
	// rebalance moves to another live instance: they are marked revoking
	// first (Owned leaves them out, Revoking reports them, Changed fires),
	// then OnRevoke is called and must return once nothing is in flight on
	// them and their progress is saved; only then are they handed back, so
	// the new owner starts where this instance stopped. ctx ends after
	// Options.RevokeTimeout: the partitions are handed back then anyway.
	OnRevoke func(ctx context.Context, partitions []int)
}

// Change is what a rebalance changed for this instance.
type Change struct {
	// Gained are the partitions claimed, with their new generations.
	Gained map[int]int64
	// Lost are the partitions handed back, taken over or dropped.
	Lost []int
	// Owned is everything owned now.
	Owned map[int]int64
}

// Member is one consumer run by this instance.
type Member struct {
	c       *Coordinator
	opts    ConsumerOptions
	changed chan struct{}

	mu       sync.Mutex
	owned    map[int]int64
	revoking map[int]bool // held, being handed back: not in Owned

	// opMu serialises rebalance and Leave: a rebalance in flight when the
	// consumer leaves would otherwise claim a lease after Leave released
	// them (and, the instance's last consumer gone, Stop would not release
	// it). left: Leave ran; a later rebalance does nothing.
	opMu sync.Mutex
	left bool
}

func key(typ, name string) string { return typ + "/" + name }

// Join registers the consumer with the coordinator: the instance row first
// (when it is the instance's first consumer), then the membership row. The
// partitions are claimed by the next Rebalance (Run does one at once).
func (c *Coordinator) Join(ctx context.Context, opts ConsumerOptions) (*Member, error) {
	if err := checkConsumer(opts.Type, opts.Name); err != nil {
		return nil, err
	}
	if opts.Partitions == 0 {
		opts.Partitions = c.e.Partitions
	}
	if opts.Partitions < 1 || opts.Partitions > maxPartitionNo+1 {
		return nil, &InvalidError{Field: "partitions", Value: opts.Partitions, Reason: "out of range 1..32768"}
	}
	if opts.Distribution != Spread && opts.Distribution != SingleOwner {
		return nil, &InvalidError{Field: "distribution", Value: opts.Distribution, Reason: `must be "" (spread) or "single-owner"`}
	}
	c.mu.Lock()
	if c.stopped {
		c.mu.Unlock()
		return nil, ErrStopped
	}
	if _, dup := c.members[key(opts.Type, opts.Name)]; dup {
		c.mu.Unlock()
		return nil, &InvalidError{Field: "consumer", Value: key(opts.Type, opts.Name), Reason: "already joined on this instance"}
	}
	registered := c.registered
	c.mu.Unlock()
	if !registered {
		if err := c.register(ctx); err != nil {
			return nil, err
		}
	}
	m := &Member{c: c, opts: opts, changed: make(chan struct{}, 1), owned: map[int]int64{}, revoking: map[int]bool{}}
	if err := m.insertMembership(ctx); err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.members[key(opts.Type, opts.Name)] = m
	c.mu.Unlock()
	c.log.Info("lease: joined consumer", "consumer", key(opts.Type, opts.Name), "partitions", opts.Partitions, "distribution", opts.Distribution)
	return m, nil
}

// membership is the binds naming this instance's membership of the
// consumer.
func (m *Member) membership() stmt.LeaseMemberInsertParams {
	return stmt.LeaseMemberInsertParams{ConsumerType: m.opts.Type, ConsumerName: m.opts.Name, InstanceID: m.c.opts.InstanceID}
}

func (m *Member) insertMembership(ctx context.Context) error {
	_, err := stmt.ExecLeaseMemberInsert(ctx, m.c.e, m.c.e.DB, m.membership())
	if err != nil && !m.c.e.Errors.Is(err, dialect.ErrUniqueViolation) {
		return fmt.Errorf("lease: joining %s: %w", key(m.opts.Type, m.opts.Name), err)
	}
	return nil
}

// Owned returns the partitions this instance holds, with the generation of
// each; nothing once the last live heartbeat is older than the lease
// duration (the instance may have lapsed and been taken over).
func (m *Member) Owned() map[int]int64 {
	if !m.c.fresh() {
		return map[int]int64{}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	out := maps.Clone(m.owned)
	for p := range m.revoking {
		delete(out, p)
	}
	return out
}

// Revoking reports whether the partition is being handed back to another
// instance (cooperative handover, ConsumerOptions.OnRevoke): it is still
// held, but no new message of it may be applied.
func (m *Member) Revoking(partition int) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.revoking[partition]
}

// Changed receives a value after a change of what this instance owns
// (coalesced: one pending value at most).
func (m *Member) Changed() <-chan struct{} { return m.changed }

// Claim returns the claim of a partition this instance holds, whose
// Generation is the fencing token of applies outside the database.
// A partition being revoked is still held: its claim is returned.
func (m *Member) Claim(partition int) (Claim, bool) {
	var gen int64
	ok := m.c.fresh()
	if ok {
		m.mu.Lock()
		gen, ok = m.owned[partition]
		m.mu.Unlock()
	}
	return Claim{ConsumerType: m.opts.Type, ConsumerName: m.opts.Name, Partition: partition, InstanceID: m.c.opts.InstanceID, Generation: gen}, ok
}

// Fence is Fence for a partition this instance holds, under the generation
// it claimed: call it first in the apply's transaction.
func (m *Member) Fence(ctx context.Context, tx *sql.Tx, partition int) (Claim, error) {
	cl, ok := m.Claim(partition)
	if !ok {
		return cl, &LostError{Claim: cl}
	}
	return cl, Fence(ctx, m.c.e, tx, cl)
}

// set replaces what the instance owns and reports the change.
func (m *Member) set(owned map[int]int64) {
	m.mu.Lock()
	old := m.owned
	m.owned = owned
	for p := range m.revoking {
		if _, held := owned[p]; !held {
			delete(m.revoking, p)
		}
	}
	m.mu.Unlock()
	ch := Change{Gained: map[int]int64{}, Owned: maps.Clone(owned)}
	for p, g := range owned {
		if og, ok := old[p]; !ok || og != g {
			ch.Gained[p] = g
		}
	}
	for p := range old {
		if _, ok := owned[p]; !ok {
			ch.Lost = append(ch.Lost, p)
		}
	}
	if len(ch.Gained) == 0 && len(ch.Lost) == 0 {
		return
	}
	slices.Sort(ch.Lost)
	m.c.log.Info("lease: ownership changed", "consumer", key(m.opts.Type, m.opts.Name),
		"gained", slices.Sorted(maps.Keys(ch.Gained)), "lost", ch.Lost, "owned", len(owned))
	m.notify()
	if m.opts.OnChange != nil {
		m.opts.OnChange(ch)
	}
}

// rebalance hands back what the assignment no longer gives this instance
// and claims what it does: a missing row is inserted at generation 1, a
// free or lapsed one taken over (generation + 1); one a live instance holds
// is left for it to hand back.
func (m *Member) rebalance(ctx context.Context) error {
	m.opMu.Lock()
	defer m.opMu.Unlock()
	if m.left {
		return nil
	}
	e, me := m.c.e, m.c.opts.InstanceID
	live, err := m.liveMembers(ctx)
	if err != nil {
		return err
	}
	if !slices.Contains(live, me) { // purged while this instance was paused
		if err := m.insertMembership(ctx); err != nil {
			return err
		}
		live = append(live, me)
	}
	rows, err := readOwnership(ctx, e, e.DB, m.opts.Type, m.opts.Name)
	if err != nil {
		return err
	}
	current, byPartition := map[int]string{}, map[int]PartitionLease{}
	for _, r := range rows {
		byPartition[r.Partition] = r
		if r.Live && r.Owner != "" {
			current[r.Partition] = r.Owner
		}
	}
	plan := Assign(key(m.opts.Type, m.opts.Name), m.opts.Partitions, live, current, m.opts.Distribution)
	owned := map[int]int64{}
	var moving []PartitionLease
	for _, r := range rows {
		if r.Owner != me || r.Partition >= m.opts.Partitions {
			continue
		}
		if plan[r.Partition] == me {
			owned[r.Partition] = r.Generation
		} else {
			moving = append(moving, r)
		}
	}
	if err := m.handBack(ctx, moving, owned); err != nil {
		return err
	}
	for p := range m.opts.Partitions {
		if _, mine := owned[p]; mine || plan[p] != me {
			continue
		}
		gen, err := m.claim(ctx, p, byPartition)
		if err != nil {
			return err
		}
		if gen > 0 {
			owned[p] = gen
		}
	}
	m.set(owned)
	return nil
}

// handBack hands the moving partitions back cooperatively: marked
// revoking (and no longer so when the plan keeps them here), the runner's
// OnRevoke finishes what is in flight on them and saves their progress,
// then each lease is released. A partition whose release fails stays
// revoking and held; the next rebalance tries again.
func (m *Member) handBack(ctx context.Context, moving []PartitionLease, kept map[int]int64) error {
	m.mu.Lock()
	for p := range m.revoking {
		if _, ok := kept[p]; ok {
			delete(m.revoking, p)
		}
	}
	parts := make([]int, 0, len(moving))
	fresh := false
	for _, r := range moving {
		parts = append(parts, r.Partition)
		fresh = fresh || !m.revoking[r.Partition]
		m.revoking[r.Partition] = true
	}
	m.mu.Unlock()
	if len(moving) == 0 {
		return nil
	}
	if fresh {
		m.c.log.Info("lease: revoking partitions for another instance", "consumer", key(m.opts.Type, m.opts.Name), "partitions", parts)
		m.notify()
	}
	if m.opts.OnRevoke != nil {
		rctx, cancel := context.WithTimeout(ctx, m.c.opts.RevokeTimeout)
		m.opts.OnRevoke(rctx, parts)
		if rctx.Err() != nil && ctx.Err() == nil {
			m.c.log.Warn("lease: in-flight applies of revoked partitions did not end in time; handing them back anyway",
				"consumer", key(m.opts.Type, m.opts.Name), "partitions", parts, "timeout", m.c.opts.RevokeTimeout)
		}
		cancel()
	}
	for _, r := range moving {
		if err := m.handBackOne(ctx, r.Partition, r.Generation); err != nil {
			return err
		}
	}
	return nil
}

func (m *Member) notify() {
	select {
	case m.changed <- struct{}{}:
	default:
	}
}

// claim takes partition p when it is unclaimed, free or lapsed and returns
// its new generation; 0 when another instance holds it or won the race.
func (m *Member) claim(ctx context.Context, p int, rows map[int]PartitionLease) (int64, error) {
	r, ok := rows[p]
	if !ok {
		_, err := stmt.ExecLeaseClaimInsert(ctx, m.c.e, m.c.e.DB, stmt.LeaseClaimInsertParams{
			ConsumerType: m.opts.Type, ConsumerName: m.opts.Name, PartitionNo: p, InstanceID: m.c.opts.InstanceID})
		switch {
		case err == nil:
			return 1, nil
		case m.c.e.Errors.Is(err, dialect.ErrUniqueViolation):
			return 0, nil
		}
		return 0, fmt.Errorf("lease: claiming %s partition %d: %w", key(m.opts.Type, m.opts.Name), p, err)
	}
	if r.Owner != "" && r.Live {
		return 0, nil
	}
	res, err := stmt.ExecLeaseTakeover(ctx, m.c.e, m.c.e.DB, stmt.LeaseTakeoverParams{ConsumerType: m.opts.Type,
		ConsumerName: m.opts.Name, PartitionNo: p, InstanceID: m.c.opts.InstanceID, Generation: r.Generation})
	if err != nil {
		return 0, fmt.Errorf("lease: taking over %s partition %d: %w", key(m.opts.Type, m.opts.Name), p, err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return 0, err
	}
	if r.Owner != "" {
		m.c.log.Info("lease: took over a lapsed lease", "consumer", key(m.opts.Type, m.opts.Name), "partition", p, "from", r.Owner, "generation", r.Generation+1)
	}
	return r.Generation + 1, nil
}

// handBackOne releases partition p held under generation gen.
func (m *Member) handBackOne(ctx context.Context, p int, gen int64) error {
	if _, err := stmt.ExecLeaseHandBack(ctx, m.c.e, m.c.e.DB, stmt.LeaseHandBackParams{ConsumerType: m.opts.Type,
		ConsumerName: m.opts.Name, PartitionNo: p, InstanceID: m.c.opts.InstanceID, Generation: gen}); err != nil {
		return fmt.Errorf("lease: %s of %s partition %d: %w", dialect.LeaseHandBack, key(m.opts.Type, m.opts.Name), p, err)
	}
	return nil
}

func (m *Member) liveMembers(ctx context.Context) ([]string, error) {
	rows, err := stmt.QueryLeaseLiveMembers(ctx, m.c.e, m.c.e.DB, stmt.LeaseLiveMembersParams{ConsumerType: m.opts.Type, ConsumerName: m.opts.Name})
	if err != nil {
		return nil, fmt.Errorf("lease: members of %s: %w", key(m.opts.Type, m.opts.Name), err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		r, err := rows.Row()
		if err != nil {
			return nil, err
		}
		out = append(out, r.InstanceID)
	}
	return out, rows.Err()
}

// Leave releases the consumer's leases on this instance and deletes its
// membership; the instance row goes with its last consumer.
func (m *Member) Leave(ctx context.Context) error {
	m.opMu.Lock()
	defer m.opMu.Unlock()
	m.left = true
	c := m.c
	m.set(map[int]int64{})
	_, err := stmt.ExecLeaseReleaseConsumer(ctx, c.e, c.e.DB, stmt.LeaseReleaseConsumerParams(m.membership()))
	if err == nil {
		_, err = stmt.ExecLeaseMemberDelete(ctx, c.e, c.e.DB, stmt.LeaseMemberDeleteParams(m.membership()))
	}
	if err != nil {
		return fmt.Errorf("lease: leaving %s: %w", key(m.opts.Type, m.opts.Name), err)
	}
	c.mu.Lock()
	delete(c.members, key(m.opts.Type, m.opts.Name))
	last := len(c.members) == 0 && c.registered
	if last {
		c.registered = false
	}
	c.mu.Unlock()
	c.log.Info("lease: left consumer", "consumer", key(m.opts.Type, m.opts.Name))
	if !last {
		return nil
	}
	if _, err := stmt.ExecLeaseInstanceDelete(ctx, c.e, c.e.DB, c.instance()); err != nil {
		return fmt.Errorf("lease: deleting the instance row: %w", err)
	}
	return nil
}
