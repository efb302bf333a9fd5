package topic

import (
	"context"
	"errors"
	"fmt"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/log/position"
	"github.com/tidemarkdb/tidemark/core/stmt"
)

// logInsert is a topic's publish through the one multi-row insert home
// (engine.Insert): the capture topic's and the read-model topics' alike.
type logInsert struct {
	e         *engine.Engine
	name      string // the insert, in errors
	records   *engine.Insert
	shape     engine.InsertShape
	positions position.Writer
	// slot is the position's slot in a row's values.
	slot int
}

// run inserts rows on q in as few statements as the insert's MaxRows
// allows: positions the strategy reserves are taken first (one reservation
// for the batch) and stamped into each row's slot; otherwise the insert
// draws and returns them, in insert order.
func (l *logInsert) run(ctx context.Context, q engine.Querier, rows [][]any) ([]int64, error) {
	reserved, err := l.positions.Reserve(ctx, q, len(rows), position.Reservation{}, nil)
	if err != nil {
		return nil, err
	}
	pos := make([]int64, len(rows))
	draws := !reserved.Held()
	if draws && l.e.Has(dialect.PositionBeginXID) {
		if _, err := stmt.ExecPositionBeginXID(ctx, l.e, q); err != nil {
			return nil, err
		}
	}
	if !draws {
		for i := range rows {
			pos[i] = reserved.Position(i)
			rows[i][l.slot] = pos[i]
		}
	}
	chunk := l.records.MaxRows(l.shape)
	for from := 0; from < len(rows); from += chunk {
		to := min(from+chunk, len(rows))
		if !draws {
			if _, err := l.records.Exec(ctx, q, l.shape, rows[from:to]); err != nil {
				return nil, err
			}
			continue
		}
		if err := l.drawn(ctx, q, rows[from:to], pos[from:to]); err != nil {
			return nil, err
		}
	}
	return pos, nil
}

// drawn runs one chunk whose positions the insert draws and returns, one
// row per message in insert order, into pos.
func (l *logInsert) drawn(ctx context.Context, q engine.Querier, vals [][]any, pos []int64) error {
	rs, err := l.records.Query(ctx, q, l.shape, vals)
	if err != nil {
		return err
	}
	defer rs.Close()
	i := 0
	for rs.Next() {
		if i >= len(pos) {
			return errors.New(l.name + " returned more rows than it inserted")
		}
		if err := rs.Scan(&pos[i]); err != nil {
			return l.e.Errors.Wrap(err)
		}
		i++
	}
	if err := rs.Err(); err != nil {
		return l.e.Errors.Wrap(err)
	}
	if i != len(pos) {
		return fmt.Errorf("%s returned %d rows for %d messages", l.name, i, len(pos))
	}
	return nil
}
