package consumer

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/stmt"
)

// Checkpoint is one CONSUMER_CHECKPOINTS row.
type Checkpoint struct {
	Source    string
	Partition int
	// Position is how far every message of the partition has been applied;
	// 0 when the column is NULL (nothing recorded yet: positions start at 1).
	Position int64
	// Recorded says the position column is not NULL.
	Recorded bool
	// Epoch is the consumer epoch it was last reset or advanced under (0:
	// NULL).
	Epoch int64
}

// Checkpoints returns every checkpoint of consumer id.
func (r *Registry) Checkpoints(ctx context.Context, id string) ([]Checkpoint, error) {
	rows, err := stmt.QueryCheckpointRead(ctx, r.e, r.e.DB, stmt.CheckpointReadParams{ConsumerID: id})
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Checkpoint
	for rows.Next() {
		c, err := rows.Row()
		if err != nil {
			return nil, err
		}
		out = append(out, Checkpoint{Source: c.SourceName, Partition: c.PartitionNo, Position: c.Position.Int64,
			Recorded: c.Position.Valid, Epoch: c.Epoch.Int64})
	}
	return out, rows.Err()
}

// readCheckpoint reads one checkpoint on q.
func (r *Registry) readCheckpoint(ctx context.Context, q engine.Querier, id, source string, partition int) (Checkpoint, error) {
	c, err := stmt.QueryRowCheckpointReadOne(ctx, r.e, q, stmt.CheckpointReadOneParams{
		ConsumerID: id, SourceName: source, PartitionNo: partition})
	if errors.Is(err, sql.ErrNoRows) {
		return Checkpoint{}, fmt.Errorf("consumer %s: checkpoint %s/%d: %w", r.label(ctx, id), source, partition, ErrNotFound)
	}
	return Checkpoint{Source: source, Partition: partition, Position: c.Position.Int64, Recorded: c.Position.Valid, Epoch: c.Epoch.Int64}, err
}

// Advance moves the checkpoint of (id, source, partition) to position
// under epoch, on q (the apply's transaction), or on its own when q is nil
// (then transient errors are retried). It reports whether the row moved: a
// write that would move it back, or that an epoch above epoch fenced off
// (a poll begun before a rebuild), changes nothing.
func (r *Registry) Advance(ctx context.Context, q engine.Querier, id, source string, partition int, position, epoch int64) (bool, error) {
	p := stmt.CheckpointAdvanceParams{ConsumerID: id, SourceName: source, PartitionNo: partition, Position: position,
		Epoch: epochBind(epoch), EpochFloor: epoch}
	var moved bool
	run := func(q engine.Querier) error {
		res, err := stmt.ExecCheckpointAdvance(ctx, r.e, q, p)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		moved = n > 0
		return err
	}
	if q != nil {
		return moved, run(q)
	}
	return moved, r.retryTransient(ctx, func() error { return run(r.e.DB) })
}

// advanceQueued is Advance on its own (autocommit), each try queued behind
// this process's other writers on an engine that runs one writing
// transaction at a time (engine.LockWriter): the runner's save of one
// checkpoint.
func (r *Registry) advanceQueued(ctx context.Context, id, source string, partition int, position, epoch int64) (bool, error) {
	var moved bool
	err := r.retryTransient(ctx, func() error {
		defer r.e.LockWriter()()
		var err error
		moved, err = r.Advance(ctx, r.e.DB, id, source, partition, position, epoch)
		return err
	})
	return moved, err
}

// advanceOver moves the checkpoint to position in tx, the transaction of
// the apply of the message at below (position >= below), only while no
// writer has moved it to below or past it: a second instance applying the
// same message finds it moved and rolls back. Guarding on the target
// instead would let both commit when the one with the lower target writes
// first.
func (r *Registry) advanceOver(ctx context.Context, tx engine.Querier, id, source string, partition int, position, below, epoch int64) (bool, error) {
	res, err := stmt.ExecCheckpointAdvanceOver(ctx, r.e, tx, stmt.CheckpointAdvanceOverParams{ConsumerID: id, SourceName: source,
		PartitionNo: partition, Position: position, Below: below, Epoch: epochBind(epoch), EpochFloor: epoch})
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n > 0, err
}
