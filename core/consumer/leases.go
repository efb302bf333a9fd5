package consumer

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/tidemarkdb/tidemark/core/lease"
)

// The runner's partition leases (Options.Leases, docs/leases.md "The
// consumer runner"): the runner joins the process's lease coordinator,
// reads and saves only the partitions this instance holds, and fences every
// write of a partition under the generation it holds it by. Lease partition
// p covers partition p of every source.

// msgLeaseLost is logged when an apply or a save is fenced off.
const msgLeaseLost = "consumer apply fenced off: partition lease lost"

// leaveTimeout bounds the release of the leases when Run returns (its ctx
// has ended): a few statements, far below it.
const leaveTimeout = 10 * time.Second

// checkLeaseOptions refuses a distribution without leases or an unknown
// one, before any SQL runs.
func checkLeaseOptions(o Options) error {
	switch {
	case o.Distribution != lease.Spread && o.Distribution != lease.SingleOwner:
		return &InvalidOptionsError{"Distribution", fmt.Sprintf("%q: want \"\" (spread) or %q", o.Distribution, lease.SingleOwner)}
	case o.Distribution != lease.Spread && o.Leases == nil:
		return &InvalidOptionsError{"Distribution", "needs Leases (a lease coordinator)"}
	}
	return nil
}

// joinLeases joins the coordinator with the consumer's partition count: the
// largest of its sources'.
func (r *Runner) joinLeases(ctx context.Context) error {
	if r.opts.Leases == nil {
		return nil
	}
	parts := 0
	for _, s := range r.sources {
		parts = max(parts, s.Partitions())
	}
	m, err := r.opts.Leases.Join(ctx, lease.ConsumerOptions{Type: r.opts.Type, Name: r.opts.Name,
		Partitions: parts, Distribution: r.opts.Distribution, OnRevoke: r.onRevoke})
	if err != nil {
		return fmt.Errorf("consumer %s/%s: joining the lease coordinator: %w", r.opts.Type, r.opts.Name, err)
	}
	r.member = m
	return nil
}

// leaseChanged is the wake-up of a change of the leases held (nil without
// leases: never).
func (r *Runner) leaseChanged() <-chan struct{} {
	if r.member == nil {
		return nil
	}
	return r.member.Changed()
}

// leave releases the consumer's leases on this instance when Run returns.
func (r *Runner) leave(ctx context.Context) {
	if r.member == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), leaveTimeout)
	defer cancel()
	if err := r.member.Leave(ctx); err != nil {
		r.opts.Logger.Warn("consumer: releasing its partition leases failed; they lapse with the instance", "consumer", r.c.Name, "err", err)
	}
}

// checkLease is the lease check of a write of partition p under gen: in a
// transaction the fence (the ownership row checked under gen and locked
// until tx ends), without one the instance's own view of its leases (an
// apply outside the database has the generation as its fencing token). A
// lost lease is a *lease.LostError.
func (r *Runner) checkLease(ctx context.Context, tx *sql.Tx, p int, gen int64) error {
	if r.member == nil {
		return nil
	}
	cl := lease.Claim{ConsumerType: r.opts.Type, ConsumerName: r.opts.Name, Partition: p,
		InstanceID: r.opts.Leases.InstanceID(), Generation: gen}
	if gen < 1 {
		return &lease.LostError{Claim: cl}
	}
	if tx != nil {
		return lease.Fence(ctx, r.reg.e, tx, cl)
	}
	if now, ok := r.member.Claim(p); !ok || now.Generation != gen {
		return &lease.LostError{Claim: cl, Generation: now.Generation}
	}
	return nil
}

// leaseLost records that partition p's lease went while the poll ran: it
// is neither applied further nor saved in this poll (the next poll reads
// the leases and checkpoints again). Not an apply error: no budget is
// spent, nothing halts, the new owner applies what was rolled back.
func (r *Runner) leaseLost(ps *pollState, p int, err error) {
	ps.dropLease(p)
	r.opts.Logger.Info(msgLeaseLost, "consumer_type", r.c.Type, "consumer", r.c.Name, "partition", p, "err", err)
}

// saveFenced is save's write of one checkpoint: under the partition's
// fence with leases (so a former owner never saves a position after a
// takeover), else on its own. A lost lease moves nothing.
func (r *Runner) saveFenced(ctx context.Context, ps *pollState, k partKey, pos, epoch, gen int64) (bool, error) {
	if r.member == nil {
		return r.reg.advanceQueued(ctx, r.c.ID, k.source, k.partition, pos, epoch)
	}
	var moved bool
	err := r.reg.inWriterTx(ctx, func(tx *sql.Tx) error {
		if err := r.checkLease(ctx, tx, k.partition, gen); err != nil {
			return err
		}
		var err error
		moved, err = r.reg.Advance(ctx, tx, r.c.ID, k.source, k.partition, pos, epoch)
		return err
	})
	if isLeaseLost(err) {
		r.leaseLost(ps, k.partition, err)
		return false, nil
	}
	return moved, err
}

func isLeaseLost(err error) bool { return errors.Is(err, lease.ErrLeaseLost) }

// startApply decides whether m's apply may begin. Once its partition is
// being handed over, no apply above the highest one already begun starts
// (errRevoking: it and what follows roll back or are left for the new
// owner); those below it still run, so the checkpoint saved before the
// release covers every apply that ran and the new owner repeats none.
func (r *Runner) startApply(m Message) error {
	if r.member == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.parts[partKey{m.Source, m.Partition}]
	if r.member.Revoking(m.Partition) && m.Position > st.started {
		return errRevoking
	}
	st.started = max(st.started, m.Position)
	return nil
}

// revoking reports whether partition p is being handed over to another
// instance: no handler runs for it any more.
func (r *Runner) revoking(p int) bool {
	return r.member != nil && r.member.Revoking(p)
}

// onRevoke is the runner's part of a cooperative handover: the partitions
// are already marked revoking (no new apply of them starts and the next
// poll leaves them out), so once the poll in flight ended — its applies
// finished and its checkpoints saved under the lease — the coordinator
// may release them.
func (r *Runner) onRevoke(ctx context.Context, partitions []int) {
	done := make(chan struct{})
	go func() {
		r.pollMu.Lock()
		r.pollMu.Unlock() //nolint:staticcheck // waiting for the poll in flight is the point
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
	}
}
