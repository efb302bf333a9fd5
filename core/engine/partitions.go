package engine

import (
	"context"
	"fmt"

	"github.com/tidemarkdb/tidemark/core/dialect"
)

// seedPartitions seeds the partition count (never overwriting) and checks
// the persisted one against the configured.
func (e *Engine) seedPartitions(ctx context.Context, q Querier) error {
	if err := e.seedExec(ctx, q, dialect.PartitionSeed, nil, map[string]any{"partitions": e.Partitions}); err != nil {
		return fmt.Errorf("seeding partition metadata: %w", err)
	}
	var persisted int
	if err := e.QueryRow(ctx, q, dialect.PartitionRead, nil, nil).Scan(&persisted); err != nil {
		return fmt.Errorf("reading partition metadata: %w", err)
	}
	if persisted != e.Partitions {
		return &PartitionMismatchError{Table: e.Names.Shared["partition_metadata_table"], Persisted: persisted, Configured: e.Partitions}
	}
	return nil
}
