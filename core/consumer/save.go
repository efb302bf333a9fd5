package consumer

import (
	"context"
	"database/sql"
	"sort"
)

// save writes every partition's contiguous position that is ahead of its
// checkpoint: at once after applies, over empty stretches at most once per
// EmptySaveInterval of the application clock (at once while a rebuild's
// replay has not reached the partition's replay_through), or now when all
// is set (a graceful stop).
func (r *Runner) save(ctx context.Context, ps *pollState, all bool) error {
	now := r.opts.Now()
	r.mu.Lock()
	type write struct {
		k        partKey
		pos, gen int64
	}
	var writes []write
	for k, st := range r.parts {
		c := st.contiguous()
		gen, mine := ps.leased(k.partition)
		replaying := st.saved < st.through
		if !mine || c <= st.saved || (!st.dirty && !all && !replaying && now.Sub(st.lastSave) < r.opts.EmptySaveInterval) {
			continue
		}
		writes = append(writes, write{k, c, gen})
	}
	stale, epoch := r.stale.Load(), r.epoch
	r.mu.Unlock()
	if stale {
		return nil
	}
	// In source and partition order: instances of one consumer saving the
	// same rows in one transaction each lock them in the same order, so
	// they never deadlock.
	sort.Slice(writes, func(i, j int) bool {
		a, b := writes[i].k, writes[j].k
		return a.source < b.source || a.source == b.source && a.partition < b.partition
	})
	moved := make([]bool, len(writes))
	if r.member == nil && len(writes) > 1 {
		// One transaction for every write: one commit (one log flush
		// where commits are durable) instead of one per partition.
		err := r.reg.inWriterTx(ctx, func(tx *sql.Tx) error {
			for i, w := range writes {
				var err error
				if moved[i], err = r.reg.Advance(ctx, tx, r.c.ID, w.k.source, w.k.partition, w.pos, epoch); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	} else {
		for i, w := range writes {
			var err error
			if moved[i], err = r.saveFenced(ctx, ps, w.k, w.pos, epoch, w.gen); err != nil {
				return err
			}
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, w := range writes {
		st := r.parts[w.k]
		st.dirty, st.lastSave = false, now
		if moved[i] {
			st.saved = max(st.saved, w.pos)
		}
	}
	return nil
}
