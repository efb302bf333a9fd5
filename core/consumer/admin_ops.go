package consumer

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/lease"
	"github.com/tidemarkdb/tidemark/core/stmt"
)

// NotHaltedError is a resume past the poison message of a consumer that
// is not HALTED (nothing to resume past).
type NotHaltedError struct {
	Consumer Ref
	State    State
}

func (e *NotHaltedError) Error() string {
	return fmt.Sprintf("consumer %s is %s, not HALTED: there is no poison message to resume past (use resume)", e.Consumer, e.State)
}

// Unwrap makes errors.Is(err, ErrTransition) hold.
func (e *NotHaltedError) Unwrap() error { return ErrTransition }

// Pause stops the consumer (running → PAUSED) until Resume; every
// instance's runner stops at its next poll.
func (o *Operator) Pause(ctx context.Context, ref Ref) (Changes, error) {
	return o.move(ctx, ref, movePause)
}

// Resume makes a PAUSED or HALTED consumer run again. Its HALTED rows
// become FAILED with a fresh budget (failure_count 0, due at once), in the
// transaction of the state change, so the runner retries the poison
// message first.
func (o *Operator) Resume(ctx context.Context, ref Ref) (Changes, error) {
	return o.move(ctx, ref, moveResume)
}

// ResumePast makes a HALTED consumer run again past its poison messages:
// its HALTED rows are deleted and a skip is recorded for each, in the
// transaction of the state change; WAITING rows behind them become heads.
// Any other state is a *NotHaltedError.
func (o *Operator) ResumePast(ctx context.Context, ref Ref) (Changes, error) {
	return o.move(ctx, ref, moveResumePast)
}

// move finds the consumer and makes move m (Registry.apply's rules) in one
// transaction.
func (o *Operator) move(ctx context.Context, ref Ref, m move) (Changes, error) {
	c, err := o.resolve(ctx, ref)
	if err != nil {
		return Changes{}, err
	}
	return o.r.move(ctx, c, &step{move: m})
}

// RetryDeadLetters gives the selected dead letters a fresh budget: rows
// with failures become FAILED (failure_count 0, due at once) and the
// later messages held dead behind a DEAD_LETTER_KEY key become WAITING,
// so the runner applies the key in order again. A DEAD_LETTER_KEY row
// stands for its whole key (source, partition, key). A selector of one
// row or one key that matches nothing is a *NoDeadLetterError.
func (o *Operator) RetryDeadLetters(ctx context.Context, ref Ref, sel Selector) (Changes, error) {
	return o.onDeadLetters(ctx, ref, sel, func(q engine.Querier, ch *Changes, c Consumer, rows, picked []UndeliveredRow) error {
		keys := map[heldKey]bool{}
		for _, u := range picked {
			if u.Status == StatusDeadLetterKey {
				keys[heldKeyOf(u)] = true
			}
		}
		for _, u := range rows {
			var err error
			switch {
			case u.Status == StatusDeadLetterKey && keys[heldKeyOf(u)]:
				to := StatusFailed
				if u.FailureCount == 0 { // held dead behind the key's first dead letter
					to = StatusWaiting
				}
				err = o.r.release(ctx, q, u, to, ch)
			case u.Status == StatusDeadLetter && hasRow(picked, u.ID):
				err = o.r.release(ctx, q, u, StatusFailed, ch)
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
}

// onDeadLetters checks sel, finds the consumer and runs fn in one
// transaction with the consumer's undelivered rows and those sel picks.
func (o *Operator) onDeadLetters(ctx context.Context, ref Ref, sel Selector, fn func(q engine.Querier, ch *Changes, c Consumer, rows, picked []UndeliveredRow) error) (Changes, error) {
	if err := sel.check(o.r); err != nil {
		return Changes{}, err
	}
	c, err := o.resolve(ctx, ref)
	if err != nil {
		return Changes{}, err
	}
	return o.inTx(ctx, func(q engine.Querier, ch *Changes) error {
		rows, err := o.r.undeliveredViews(ctx, q, c)
		if err != nil {
			return err
		}
		picked, err := pickDeadLetters(ref, rows, sel)
		if err != nil {
			return err
		}
		return fn(q, ch, c, rows, picked)
	})
}

// DeleteDeadLetters deletes the selected dead letters and records a skip
// for each, so no instance applies them. Deleting one row of a
// DEAD_LETTER_KEY key that leaves the key without a failed dead letter
// puts the key's later messages back in line (WAITING; the first becomes
// its head). By key or all, every dead letter of the key (or consumer) goes.
func (o *Operator) DeleteDeadLetters(ctx context.Context, ref Ref, sel Selector) (Changes, error) {
	return o.onDeadLetters(ctx, ref, sel, func(q engine.Querier, ch *Changes, c Consumer, rows, picked []UndeliveredRow) error {
		gone := map[string]bool{}
		for _, u := range picked {
			if err := o.r.deleteAndSkip(ctx, q, c.ID, u, ch); err != nil {
				return err
			}
			gone[u.ID] = true
		}
		// Keys left with followers but no failed dead letter to hold them.
		held := map[heldKey]bool{}
		for _, u := range rows {
			if !gone[u.ID] && u.Status == StatusDeadLetterKey && u.FailureCount > 0 {
				held[heldKeyOf(u)] = true
			}
		}
		for _, u := range rows {
			if gone[u.ID] || u.Status != StatusDeadLetterKey || held[heldKeyOf(u)] {
				continue
			}
			if err := o.r.release(ctx, q, u, StatusWaiting, ch); err != nil {
				return err
			}
		}
		return nil
	})
}

// Skip records a skip: every instance of the consumer passes over the
// message at s.Position of s.Source (for s.Key, or every key) without
// applying, recording or halting. The consumer must have a checkpoint on
// that source and partition.
func (o *Operator) Skip(ctx context.Context, ref Ref, s Skip) (Changes, error) {
	if err := checkSkip(s); err != nil {
		return Changes{}, err
	}
	if err := checkName("source name", s.Source, MaxSourceLength, o.r.e.Cat.KeysIgnoreTrailingSpaces, o.r.e.Cat.Identity.Name); err != nil {
		return Changes{}, err
	}
	c, err := o.resolve(ctx, ref)
	if err != nil {
		return Changes{}, err
	}
	return o.inTx(ctx, func(q engine.Querier, ch *Changes) error {
		if _, err := o.r.readCheckpoint(ctx, q, c.ID, s.Source, s.Partition); errors.Is(err, ErrNotFound) {
			return &NotSubscribedError{Consumer: ref, Source: s.Source, Partition: s.Partition}
		} else if err != nil {
			return err
		}
		if err := o.r.recordSkip(ctx, q, c.ID, s); err != nil {
			return err
		}
		ch.Skips++
		return nil
	})
}

// Unsubscribe removes the consumer from source, in foreign-key order in
// one transaction: the source's skips, its undelivered rows, its
// checkpoints (incomplete-history marks with them), then the CONSUMERS
// row when no checkpoint is left, which leaves the consumer running and
// never rebuilt should it subscribe again, and with it the consumer's
// partition leases and memberships.
func (o *Operator) Unsubscribe(ctx context.Context, ref Ref, source string) (Changes, error) {
	if err := checkName("source name", source, MaxSourceLength, o.r.e.Cat.KeysIgnoreTrailingSpaces, o.r.e.Cat.Identity.Name); err != nil {
		return Changes{}, err
	}
	c, err := o.resolve(ctx, ref)
	if err != nil {
		return Changes{}, err
	}
	return o.inTx(ctx, func(q engine.Querier, ch *Changes) error {
		e := o.r.e
		count, err := stmt.QueryRowAdminCheckpointCountSource(ctx, e, q, stmt.AdminCheckpointCountSourceParams{ConsumerID: c.ID, SourceName: source})
		if err != nil {
			return err
		}
		if count.N == 0 {
			return &NotSubscribedError{Consumer: ref, Source: source, Partition: -1}
		}
		if err := unsubscribeRows(ctx, e, q, c.ID, source, ch); err != nil {
			return fmt.Errorf("consumer %s: unsubscribe %s: %w", ref, source, err)
		}
		gone, err := rowsChanged(stmt.ExecAdminConsumerDeleteUnreferenced(ctx, e, q, stmt.AdminConsumerDeleteUnreferencedParams{ID: c.ID}))
		ch.ConsumerDeleted = gone > 0
		if err != nil || !ch.ConsumerDeleted {
			return err
		}
		// Its last checkpoint went: so do its partition leases and
		// memberships (the spec's PARTITION_OWNERSHIP), in this transaction.
		return lease.DeleteConsumer(ctx, e, q, c.Type, c.Name)
	})
}

// unsubscribeRows deletes the skips, undelivered rows and checkpoints of
// consumer id on source, counting each in ch.
func unsubscribeRows(ctx context.Context, e *engine.Engine, q engine.Querier, id, source string, ch *Changes) (err error) {
	if ch.SkipsDeleted, err = rowsChanged(stmt.ExecAdminSkippedDeleteSource(ctx, e, q,
		stmt.AdminSkippedDeleteSourceParams{ConsumerID: id, SourceName: source})); err != nil {
		return err
	}
	if ch.Deleted, err = rowsChanged(stmt.ExecAdminUndeliveredDeleteSource(ctx, e, q,
		stmt.AdminUndeliveredDeleteSourceParams{ConsumerID: id, SourceName: source})); err != nil {
		return err
	}
	ch.Checkpoints, err = rowsChanged(stmt.ExecAdminCheckpointDeleteSource(ctx, e, q,
		stmt.AdminCheckpointDeleteSourceParams{ConsumerID: id, SourceName: source}))
	return err
}

// release gives row u a fresh budget as status to (FAILED or WAITING),
// guarded by the status it was read with.
func (r *Registry) release(ctx context.Context, q engine.Querier, u UndeliveredRow, to DeliveryStatus, ch *Changes) error {
	n, err := rowsChanged(stmt.ExecAdminUndeliveredRelease(ctx, r.e, q, stmt.AdminUndeliveredReleaseParams{
		ID: u.ID, Status: string(to), FromStatus: string(u.Status)}))
	if err != nil {
		return fmt.Errorf("undelivered %s: %s → %s: %w", u.ID, u.Status, to, err)
	}
	if to == StatusWaiting {
		ch.Waiting += n
	} else {
		ch.Released += n
	}
	return nil
}

// deleteAndSkip deletes row u (guarded by its status) and records the
// skip of its message for its key.
func (r *Registry) deleteAndSkip(ctx context.Context, q engine.Querier, id string, u UndeliveredRow, ch *Changes) error {
	n, err := rowsChanged(stmt.ExecAdminUndeliveredDeleteOne(ctx, r.e, q, stmt.AdminUndeliveredDeleteOneParams{ID: u.ID, FromStatus: string(u.Status)}))
	if err != nil {
		return fmt.Errorf("undelivered %s: delete: %w", u.ID, err)
	}
	if n == 0 { // the runner moved it meanwhile: not ours to skip
		return nil
	}
	ch.Deleted += n
	if err := r.recordSkip(ctx, q, id, Skip{Source: u.Source, Partition: u.Partition, Position: u.Position, Key: u.Key}); err != nil {
		return err
	}
	ch.Skips++
	return nil
}

func rowsChanged(res interface{ RowsAffected() (int64, error) }, err error) (int64, error) {
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// heldKey is where a key is held: (source, partition, key).
type heldKey struct {
	source    string
	partition int
	key       string
}

func heldKeyOf(u UndeliveredRow) heldKey { return heldKey{u.Source, u.Partition, u.Key} }

// pickDeadLetters returns the dead letters sel selects among rows.
func pickDeadLetters(ref Ref, rows []UndeliveredRow, sel Selector) ([]UndeliveredRow, error) {
	var out []UndeliveredRow
	for _, u := range rows {
		if !u.IsDeadLetter() {
			continue
		}
		if sel.All || sel.ID != "" && strings.EqualFold(u.ID, sel.ID) || sel.ID == "" && u.Source == sel.Source && u.Key == sel.Key {
			out = append(out, u)
		}
	}
	if len(out) == 0 && !sel.All {
		return nil, &NoDeadLetterError{Consumer: ref, Selector: sel}
	}
	return out, nil
}

func hasRow(rows []UndeliveredRow, id string) bool {
	for _, u := range rows {
		if u.ID == id {
			return true
		}
	}
	return false
}
