package consumer

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/jmoiron/sqlx"
	"github.com/jmoiron/sqlx/reflectx"

	"github.com/tidemarkdb/tidemark/core/dialect"
)

// PartitionStatus is one checkpoint as an operator sees it: where the
// consumer is, where the source's mark is, and the lag between them.
type PartitionStatus struct {
	Source    string        `db:"source_name"`
	Partition int           `db:"partition_no"`
	Position  sql.NullInt64 `db:"position"`
	Epoch     sql.NullInt64 `db:"epoch"`
	// Mark is the source's high-water mark and Lag is Mark minus the
	// checkpoint (0 for a source not passed to Status).
	Mark int64 `db:"-"`
	Lag  int64 `db:"-"`
}

// Status reads the consumer's checkpoints into structs (sqlx: an operator
// read, off the hot path) and, for every source given, its mark and lag.
func (r *Registry) Status(ctx context.Context, id string, sources ...Source) ([]PartitionStatus, error) {
	c, err := r.e.Compile(dialect.CheckpointRead, nil)
	if err != nil {
		return nil, err
	}
	args, err := c.Args(map[string]any{"consumer_id": id})
	if err != nil {
		return nil, err
	}
	db := sqlx.NewDb(r.e.DB, r.e.Cat.Identity.DriverName)
	// Column labels come back as the engine stores unquoted names: H2 and
	// HSQLDB fold them to upper case.
	fold := func(s string) string { return s }
	if r.e.Cat.Identity.FoldsUnquotedTo == "upper" {
		fold = strings.ToUpper
	}
	db.Mapper = reflectx.NewMapperTagFunc("db", fold, fold)
	var out []PartitionStatus
	if err := db.SelectContext(ctx, &out, c.SQL, args...); err != nil {
		return nil, fmt.Errorf("consumer %s: status: %w", r.label(ctx, id), r.e.Errors.Wrap(err))
	}
	marks := map[string]int64{}
	for _, s := range sources {
		m, err := s.Mark(ctx)
		if err != nil {
			return nil, err
		}
		marks[s.Name()] = m
	}
	for i := range out {
		if m, ok := marks[out[i].Source]; ok {
			out[i].Mark, out[i].Lag = m, max(0, m-out[i].Position.Int64)
		}
	}
	return out, nil
}
