package consumer

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/tidemarkdb/tidemark/core/stmt"
	"github.com/tidemarkdb/tidemark/core/topic"
)

// readError is a Source.Read failure, with the source it came from.
type readError struct {
	source Source
	err    error
}

func (e *readError) Error() string { return fmt.Sprintf("reading %s: %v", e.source.Name(), e.err) }
func (e *readError) Unwrap() error { return e.err }

// errNotMissing: the poll's error is not missing history.
var errNotMissing = errors.New("not missing history")

// missingHistory turns a read that found its history deleted (a
// *topic.MissingHistoryError) into the incomplete-history mark on every
// checkpoint of the consumer's read of that source, raised to the topic's
// start, and the MISSING_HISTORY halt, in one transaction. It returns
// errNotMissing for any other error, nil once halted.
func (r *Runner) missingHistory(ctx context.Context, ps *pollState, err error) error {
	var re *readError
	var mh *topic.MissingHistoryError
	if !errors.As(err, &re) || !errors.As(err, &mh) {
		return errNotMissing
	}
	halted := false
	werr := r.reg.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := stmt.ExecCheckpointMarkIncomplete(ctx, r.reg.e, tx, stmt.CheckpointMarkIncompleteParams{
			ConsumerID: r.c.ID, SourceName: re.source.Name(), Through: mh.TopicStart}); err != nil {
			return err
		}
		ok, err := r.reg.haltIn(ctx, tx, r.c.ID, r.c.State, MissingHistory)
		halted = ok
		return err
	})
	if werr != nil {
		return fmt.Errorf("consumer %s: marking missing history of %s: %w", r.c.label(), re.source.Name(), werr)
	}
	if halted {
		r.setHalted(ps, MissingHistory, "source", re.source.Name(), "read_after", mh.Position, "topic_start", mh.TopicStart)
	}
	return nil
}

// incompleteMarks reads every checkpoint's incomplete-history mark (0 for
// NULL).
func (r *Registry) incompleteMarks(ctx context.Context, id string) (map[partKey]int64, error) {
	rows, err := stmt.QueryCheckpointReadIncomplete(ctx, r.e, r.e.DB, stmt.CheckpointReadIncompleteParams{ConsumerID: id})
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[partKey]int64{}
	for rows.Next() {
		row, err := rows.Row()
		if err != nil {
			return nil, err
		}
		out[partKey{source: row.SourceName, partition: row.PartitionNo}] = row.IncompleteThrough.Int64
	}
	return out, rows.Err()
}

// IncompleteThrough returns the incomplete-history mark of every
// checkpoint of consumer id on source, by partition (absent: NULL).
func (r *Registry) IncompleteThrough(ctx context.Context, id, source string) (map[int]int64, error) {
	marks, err := r.incompleteMarks(ctx, id)
	if err != nil {
		return nil, err
	}
	out := map[int]int64{}
	for k, v := range marks {
		if k.source == source && v > 0 {
			out[k.partition] = v
		}
	}
	return out, nil
}
