package topic

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/sqlerr"
	"github.com/tidemarkdb/tidemark/core/stmt"
)

// CompactOptions configure Compact.
type CompactOptions struct {
	// TombstoneMaxAge, when above 0, turns tombstone retention on: a
	// tombstone older than it (occurred_at), at or below the compacted
	// position and below every consumer checkpoint of the topic is
	// deleted. 0 keeps tombstones for ever.
	TombstoneMaxAge time.Duration
	// Now is the clock of the age (default time.Now).
	Now func() time.Time
}

// Compacted is what one Compact did.
type Compacted struct {
	// Through is the position through which every superseded message of
	// the topic is deleted (TOPIC_COMPACTION.compacted_through).
	Through int64
	// Superseded and Tombstones count the rows deleted.
	Superseded, Tombstones int64
}

// Compact deletes the topic's superseded messages: every message of a key
// with a newer message of that key at or below the mark (committed),
// recording the mark as the topic's compacted_through in TOPIC_COMPACTION
// (one row per topic, named by SourceName) in the same transaction of its
// own. It runs outside any apply, and not while the topic's projection
// rebuilds (ErrRebuilding). A consumer reading behind may miss a
// superseded message it had not reached, never the latest of a key, so it
// converges on the latest state. With opts.TombstoneMaxAge it then deletes
// the tombstones that are old enough, compacted, and below the slowest
// consumer checkpoint on the topic (a consumer with a partition that has
// recorded nothing holds every tombstone). Compacts of one topic at once
// are safe: each records its progress before it deletes (the row's lock
// orders them), and one that meets the other's first record of progress
// (a unique violation) runs again after it, deleting what is left. A
// Compactor runs it on a schedule, in one process at a time.
func (t *ReadModelTopic) Compact(ctx context.Context, opts CompactOptions) (Compacted, error) {
	if opts.TombstoneMaxAge < 0 {
		return Compacted{}, fmt.Errorf("compaction of %s: %w: negative tombstone age %s", t.name, ErrInvalidCompaction, opts.TombstoneMaxAge)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	var res Compacted
	var err error
	for range compactAttempts {
		err = t.e.InTx(ctx, engine.OpWrite, engine.DefaultTransientRetry, func(tx *sql.Tx) error {
			var err error
			res, err = t.compact(ctx, tx, opts)
			return err
		})
		if !errors.Is(err, sqlerr.ErrUniqueViolation) {
			break
		}
	}
	if err != nil {
		return Compacted{}, fmt.Errorf("compaction of %s: %w", t.name, err)
	}
	return res, nil
}

// compactAttempts bounds Compact's transactions: a second runs after a
// concurrent compaction recorded the topic's first progress (then the row
// exists and the two are ordered by its lock).
const compactAttempts = 3

// ErrInvalidCompaction is wrapped by a refusal of bad compaction options,
// before any SQL.
var ErrInvalidCompaction = errors.New("invalid compaction options")

// ErrRebuilding: Compact of a projection's topic while the projection
// rebuilds. Its query table's rows point at the states of before the
// rebuild, which the replay's newer states of the same keys supersede:
// compacting them would take the read models from under its readers.
var ErrRebuilding = errors.New("the projection rebuilds")

// rebuilding tells whether the projection the topic belongs to (the
// consumer projection/<topic>) has a rebuild's replay in progress.
func (t *ReadModelTopic) rebuilding(ctx context.Context, q engine.Querier) (bool, error) {
	c, err := stmt.QueryRowConsumerByName(ctx, t.e, q, stmt.ConsumerByNameParams{ConsumerType: "projection", ConsumerName: t.name})
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	rows, err := stmt.QueryCheckpointReadReplay(ctx, t.e, q, stmt.CheckpointReadReplayParams{ConsumerID: c.ID})
	if err != nil {
		return false, err
	}
	defer rows.Close()
	for rows.Next() {
		r, err := rows.Row()
		if err != nil {
			return false, err
		}
		if r.ReplayThrough.Valid {
			return true, nil
		}
	}
	return false, rows.Err()
}

func (t *ReadModelTopic) compact(ctx context.Context, q engine.Querier, opts CompactOptions) (Compacted, error) {
	src := t.SourceName()
	busy, err := t.rebuilding(ctx, q)
	if err != nil {
		return Compacted{}, err
	}
	if busy {
		return Compacted{}, fmt.Errorf("compaction of %s: %w; compact after its switch", t.name, ErrRebuilding)
	}
	done, err := stmt.QueryRowRMTopicCompactedThrough(ctx, t.e, q, stmt.RMTopicCompactedThroughParams{Topic: src})
	seen := err == nil
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return Compacted{}, err
	}
	mark, err := t.mark(ctx, q)
	if err != nil {
		return Compacted{}, err
	}
	res := Compacted{Through: max(done.CompactedThrough, mark)}
	if mark > done.CompactedThrough {
		// Progress first: its row's lock makes a concurrent compaction
		// of the topic wait for this one's commit.
		if seen {
			_, err = stmt.ExecRMTopicCompactionAdvance(ctx, t.e, q, stmt.RMTopicCompactionAdvanceParams{Topic: src, Through: mark})
		} else {
			_, err = stmt.ExecRMTopicCompactionInsert(ctx, t.e, q, stmt.RMTopicCompactionInsertParams{Topic: src, Through: mark})
		}
		if err != nil {
			return Compacted{}, fmt.Errorf("recording progress: %w", err)
		}
		r, err := stmt.ExecRMTopicCompactDelete(ctx, t.e, q, stmt.RMTopicCompactDeleteParams{Topic: t.name, After: done.CompactedThrough, Through: mark})
		if err != nil {
			return Compacted{}, err
		}
		res.Superseded = affected(r)
	}
	if opts.TombstoneMaxAge == 0 || res.Through == 0 {
		return res, nil
	}
	below := res.Through + 1
	_, slowest, held, err := slowestCheckpoint(ctx, t.e, q, src)
	if err != nil {
		return Compacted{}, err
	}
	if held {
		below = min(below, slowest)
	}
	cutoff := t.e.Cat.Facts.CutEventTime(opts.Now().Add(-opts.TombstoneMaxAge))
	r, err := stmt.ExecRMTopicDeleteTombstones(ctx, t.e, q, stmt.RMTopicDeleteTombstonesParams{Topic: t.name, Deleted: true, Below: below, Cutoff: cutoff})
	if err != nil {
		return Compacted{}, fmt.Errorf("deleting tombstones: %w", err)
	}
	res.Tombstones = affected(r)
	return res, nil
}

// affected is a result's row count, -1 where the driver cannot tell.
func affected(r sql.Result) int64 {
	n, err := r.RowsAffected()
	if err != nil {
		return -1
	}
	return n
}
