package topic

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/stmt"
)

// Retention is how much of the topic to keep. A message is deleted when
// either limit says so (older than MaxAge, or beyond the newest
// MaxMessages), and never at or past the slowest checkpoint of any
// consumer subscribed to the topic. A zero limit is off.
type Retention struct {
	// MaxAge keeps messages whose occurred_at is within MaxAge of Now.
	MaxAge time.Duration
	// MaxMessages keeps the newest MaxMessages messages at or below the mark.
	MaxMessages int64
	// Now is the application clock the age is measured against (default
	// time.Now); occurred_at is UTC on every engine.
	Now func() time.Time
}

// Retained is what a retention run did.
type Retained struct {
	// Start is the topic's start after the run: every message at or below
	// it is deleted.
	Start int64
	// Deleted is how many messages this run deleted.
	Deleted int64
	// HeldBy, when not empty, is the consumer whose checkpoint stopped the
	// run short of what the policy asked, as "type/name" (with HeldAt its
	// slowest position, 0 when it has recorded nothing and holds the whole
	// topic), and HeldByID its id.
	HeldBy   string
	HeldByID string
	HeldAt   int64
}

// Retain deletes the messages policy no longer keeps, as a prefix of the
// topic: it computes the highest position T such that every message at or
// below T may go, deletes (start, T] and records T as topic_start, both
// in one transaction, so a reader sees either the old start with the
// messages or the new start without them.
//
// The prefix never passes the mark (a position above it may still commit)
// nor reaches the slowest checkpoint on the topic: a consumer's
// checkpoint position P keeps P and everything after it. A consumer that
// has a checkpoint row on the topic without a position, or fewer rows than
// the topic's partitions (a partition that has recorded nothing), holds
// the whole topic: nothing is deleted.
func (t *Topic) Retain(ctx context.Context, policy Retention) (Retained, error) {
	if policy.MaxAge < 0 || policy.MaxMessages < 0 {
		return Retained{}, fmt.Errorf("retention of %s: negative limits (age %s, messages %d)", t.name, policy.MaxAge, policy.MaxMessages)
	}
	if policy.Now == nil {
		policy.Now = time.Now
	}
	tx, err := t.e.BeginTx(ctx, engine.OpAppend)
	if err != nil {
		return Retained{}, err
	}
	defer func() { _ = tx.Rollback() }()
	res, err := t.retain(ctx, tx, policy)
	if err != nil {
		return Retained{}, err
	}
	// Committed even when nothing moved: the transaction only read then.
	if err := tx.Commit(); err != nil {
		return Retained{}, t.e.Errors.Wrap(err)
	}
	return res, nil
}

func (t *Topic) retain(ctx context.Context, q engine.Querier, policy Retention) (Retained, error) {
	mark, start, err := t.bounds(ctx, q)
	if err != nil {
		return Retained{}, err
	}
	res := Retained{Start: start}
	through := start
	if policy.MaxAge > 0 {
		cutoff := t.e.Cat.Facts.CutEventTime(policy.Now().Add(-policy.MaxAge))
		row, err := stmt.QueryRowTopicFirstSince(ctx, t.e, q, stmt.TopicFirstSinceParams{After: start, Cutoff: cutoff})
		first := row.GlobalPosition
		if err != nil {
			return res, fmt.Errorf("retention of %s: %w", t.name, err)
		}
		if first.Valid {
			through = max(through, first.Int64-1)
		} else {
			through = mark // nothing young: everything up to the mark is old
		}
	}
	if policy.MaxMessages > 0 {
		p, err := t.beyondNewest(ctx, q, start, mark, policy.MaxMessages)
		if err != nil {
			return res, err
		}
		through = max(through, p)
	}
	through = min(through, mark)
	if through <= start {
		return res, nil
	}
	holder, slowest, held, err := t.slowestCheckpoint(ctx, q)
	if err != nil {
		return res, err
	}
	if held && slowest-1 < through {
		through, res.HeldByID, res.HeldAt = slowest-1, holder, slowest
		if res.HeldBy, err = t.consumerName(ctx, q, holder); err != nil {
			return res, err
		}
		if through <= start {
			return res, nil
		}
	}
	r, err := stmt.ExecTopicDeleteThrough(ctx, t.e, q, stmt.TopicDeleteThroughParams{After: start, Through: through})
	if err != nil {
		return res, fmt.Errorf("retention of %s: deleting through %d: %w", t.name, through, err)
	}
	if res.Deleted, err = r.RowsAffected(); err != nil {
		return res, err
	}
	if _, err := stmt.ExecTopicSetStart(ctx, t.e, q, stmt.TopicSetStartParams{Topic: t.name, Start: through}); err != nil {
		return res, fmt.Errorf("retention of %s: recording topic_start %d: %w", t.name, through, err)
	}
	res.Start = through
	return res, nil
}

// beyondNewest is the highest position that must go for at most keep
// messages to remain in (start, mark].
func (t *Topic) beyondNewest(ctx context.Context, q engine.Querier, start, mark, keep int64) (int64, error) {
	count, err := stmt.QueryRowTopicCount(ctx, t.e, q, stmt.TopicCountParams{After: start, Upto: mark})
	if err != nil {
		return 0, fmt.Errorf("retention of %s: counting: %w", t.name, err)
	}
	n := count.Count
	if n <= keep {
		return start, nil
	}
	rows, err := stmt.QueryTopicPositions(ctx, t.e, q, stmt.TopicPositionsParams{After: start, Upto: mark, Limit: int(n - keep)})
	if err != nil {
		return 0, fmt.Errorf("retention of %s: %w", t.name, err)
	}
	defer rows.Close()
	last := start
	for rows.Next() {
		r, err := rows.Row()
		if err != nil {
			return 0, err
		}
		last = r.GlobalPosition
	}
	return last, rows.Err()
}

func (t *Topic) slowestCheckpoint(ctx context.Context, q engine.Querier) (holder string, slowest int64, held bool, err error) {
	holder, slowest, held, err = slowestCheckpoint(ctx, t.e, q, t.name)
	if err != nil {
		return "", 0, false, fmt.Errorf("retention of %s: %w", t.name, err)
	}
	return holder, slowest, held, nil
}

// slowestCheckpoint reads CONSUMER_CHECKPOINTS for source: held is false
// when no consumer is subscribed. A consumer with a row without a
// position, or without a row for every partition, has recorded nothing
// somewhere and holds the whole topic (slowest 0).
func slowestCheckpoint(ctx context.Context, e *engine.Engine, q engine.Querier, source string) (holder string, slowest int64, held bool, err error) {
	rows, err := stmt.QueryTopicCheckpoints(ctx, e, q, stmt.TopicCheckpointsParams{Topic: source})
	if err != nil {
		return "", 0, false, fmt.Errorf("reading checkpoints: %w", err)
	}
	defer rows.Close()
	type consumer struct {
		rows    int
		slowest int64 // 0: a row without a position
	}
	seen := map[string]*consumer{}
	var order []string
	for rows.Next() {
		r, err := rows.Row()
		if err != nil {
			return "", 0, false, err
		}
		id, pos := r.ConsumerID, r.Position
		c := seen[string(id)]
		if c == nil {
			c = &consumer{slowest: pos.Int64}
			seen[string(id)] = c
			order = append(order, string(id))
		}
		c.rows++
		if !pos.Valid {
			c.slowest = 0
		}
		c.slowest = min(c.slowest, pos.Int64)
	}
	if err := rows.Err(); err != nil {
		return "", 0, false, err
	}
	for _, id := range order {
		c := seen[id]
		if c.rows < e.Partitions {
			c.slowest = 0 // a partition without a row has recorded nothing
		}
		if !held || c.slowest < slowest {
			holder, slowest, held = id, c.slowest, true
		}
	}
	return holder, slowest, held, nil
}

// consumerName is consumer id's "type/name", or id when its row is gone.
func (t *Topic) consumerName(ctx context.Context, q engine.Querier, id string) (string, error) {
	c, err := stmt.QueryRowConsumerByID(ctx, t.e, q, stmt.ConsumerByIDParams{ID: id})
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return id, nil
	case err != nil:
		return "", fmt.Errorf("retention of %s: reading consumer %s: %w", t.name, id, err)
	}
	return c.ConsumerType + "/" + c.ConsumerName, nil
}
