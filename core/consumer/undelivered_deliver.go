package consumer

import (
	"context"
	"sort"

	"github.com/tidemarkdb/tidemark/core/stmt"
)

// keyRef is a key within a source's partition: what an undelivered row
// holds.
type keyRef struct {
	source    string
	partition int
	key       string
}

func refOf(m Message) keyRef { return keyRef{m.Source, m.Partition, m.Key} }

// loadDelivery reads the consumer's undelivered rows and, once per source,
// its skips; skips every partition has passed are deleted.
func (r *Runner) loadDelivery(ctx context.Context) error {
	all, err := r.reg.UndeliveredRows(ctx, r.c.ID)
	if err != nil {
		return err
	}
	rows := map[keyRef][]*UndeliveredRow{}
	for i := range all {
		u := &all[i]
		k := keyRef{u.Source, u.Partition, u.Key}
		rows[k] = append(rows[k], u) // in position order: UndeliveredRows sorts
	}
	skips := map[string][]Skip{}
	for _, s := range r.sources {
		sk, err := r.reg.skips(ctx, r.reg.e.DB, r.c.ID, s.Name(), 0)
		if err != nil {
			return err
		}
		skips[s.Name()] = sk
		if err := r.cleanSkips(ctx, s, sk, all); err != nil {
			return err
		}
	}
	r.dmu.Lock()
	r.rows, r.skips = rows, skips
	r.dmu.Unlock()
	return nil
}

// cleanSkips deletes the skips of s at or below the lowest checkpoint of
// its partitions (every partition that can meet them has passed them) at
// whose position no undelivered row lies. The lowest checkpoint is
// conservative for a topic whose partitions have positions of their own.
func (r *Runner) cleanSkips(ctx context.Context, s Source, sk []Skip, rows []UndeliveredRow) error {
	through := int64(-1)
	r.mu.Lock()
	for p := range s.Partitions() {
		st := r.parts[partKey{s.Name(), p}]
		if through < 0 || st.saved < through {
			through = st.saved
		}
	}
	r.mu.Unlock()
	busy := map[int64]bool{}
	for _, u := range rows {
		if u.Source == s.Name() {
			busy[u.Position] = true
		}
	}
	passed := false
	for _, k := range sk {
		passed = passed || (k.Position <= through && !busy[k.Position])
	}
	if !passed {
		return nil
	}
	return r.reg.retryTransient(ctx, func() error {
		_, err := stmt.ExecSkippedDeletePassed(ctx, r.reg.e, r.reg.e.DB, stmt.SkippedDeletePassedParams{
			ConsumerID: r.c.ID, SourceName: s.Name(), Through: through})
		return err
	})
}

// skipped tells whether a skip holds for key at (source, partition,
// position).
func (r *Runner) skipped(source string, partition int, position int64, key string) bool {
	r.dmu.Lock()
	defer r.dmu.Unlock()
	return r.skippedLocked(source, partition, position, key)
}

func (r *Runner) skippedLocked(source string, partition int, position int64, key string) bool {
	s := r.bySource[source]
	for _, k := range r.skips[source] {
		if k.Position == position && (k.EveryKey || k.Key == key) && (k.Partition == partition || s != nil && s.OnePositionSpace()) {
			return true
		}
	}
	return false
}

// admit is skipped and holding of a new message under one lock: skip, or
// the status it is recorded with behind its key, or whether it has a row.
func (r *Runner) admit(m Message) (skip bool, status DeliveryStatus, recorded bool) {
	r.dmu.Lock()
	defer r.dmu.Unlock()
	if r.skippedLocked(m.Source, m.Partition, m.Position, m.Key) {
		return true, "", false
	}
	status, recorded = r.holdingLocked(m)
	return false, status, recorded
}

// holdingLocked (under dmu) is the status a new message of m's key is recorded with when an
// earlier row holds the key ("" when none does): DEAD_LETTER_KEY behind a
// DEAD_LETTER_KEY head, WAITING otherwise. recorded: m has a row already
// (recorded before a crash left the checkpoint behind it).
func (r *Runner) holdingLocked(m Message) (status DeliveryStatus, recorded bool) {
	for _, u := range r.rows[refOf(m)] {
		if u.Position == m.Position {
			return "", true
		}
		if u.Position < m.Position && u.Status.Holds() && status == "" {
			status = StatusWaiting
			if u.Status == StatusDeadLetterKey {
				status = StatusDeadLetterKey
			}
		}
	}
	return status, false
}

func (r *Runner) remember(u UndeliveredRow) {
	r.dmu.Lock()
	defer r.dmu.Unlock()
	k := keyRef{u.Source, u.Partition, u.Key}
	rs := append(r.rows[k], &u)
	sort.Slice(rs, func(i, j int) bool { return rs[i].Position < rs[j].Position })
	r.rows[k] = rs
}

func (r *Runner) setHalted(ps *pollState, reason HaltReason, args ...any) {
	ps.halt()
	r.opts.Metrics.Halted(r.c, reason)
	r.opts.Logger.Warn("consumer halted", append([]any{"consumer_type", r.c.Type, "consumer", r.c.Name, "halt_reason", reason}, args...)...)
}

// reportLag reports every partition's lag behind its source's mark as
// this poll read it.
func (r *Runner) reportLag(ps *pollState) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range r.sources {
		mark, ok := ps.mark(s.Name())
		if !ok {
			continue
		}
		for p := range s.Partitions() {
			if _, mine := ps.leased(p); !mine {
				continue // its owner reports it
			}
			if st := r.parts[partKey{s.Name(), p}]; st != nil {
				// What the runner has read and completed, saved or not: an
				// idle partition read up to the mark saves only once per
				// EmptySaveInterval but lags nothing.
				r.opts.Metrics.Lag(r.c, s.Name(), p, max(0, mark-max(st.saved, st.contiguous())))
			}
		}
	}
}
