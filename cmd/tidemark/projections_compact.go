package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/spf13/cobra"

	"github.com/tidemarkdb/tidemark/core/consumer"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/topic"
)

// compactResult is one compaction as `projections compact --json` prints it.
type compactResult struct {
	Projection string `json:"projection"`
	Through    int64  `json:"compacted_through"`
	Superseded int64  `json:"superseded_deleted"`
	Tombstones int64  `json:"tombstones_deleted"`
}

// projectionsCompactCmd is `tidemark projections compact <name>`: one
// compaction of the projection's read-model topic, or with --every one
// every interval until interrupted, under the topic's compaction lease
// (one process at a time compacts a topic on a schedule).
func projectionsCompactCmd() *cobra.Command {
	var maxAge, every time.Duration
	cmd := projectionCmd("compact <name>", "Compact a projection's read-model topic: delete superseded states (and old tombstones with --tombstone-max-age)", engine.Config{Existing: true},
		func(ctx context.Context, op *consumer.Operator, _ string, out io.Writer, asJSON bool, name string) error {
			tp, err := topic.OpenReadModel(ctx, op.Engine(), name)
			if err != nil {
				return err
			}
			show := func(res topic.Compacted) error {
				r := compactResult{Projection: name, Through: res.Through, Superseded: res.Superseded, Tombstones: res.Tombstones}
				if asJSON {
					return printJSON(out, r)
				}
				_, err := fmt.Fprintf(out, "compacted projection/%s through %d: %d superseded, %d tombstones deleted\n", name, r.Through, r.Superseded, r.Tombstones)
				return err
			}
			if every == 0 {
				res, err := tp.Compact(ctx, topic.CompactOptions{TombstoneMaxAge: maxAge})
				if err != nil {
					return err
				}
				return show(res)
			}
			return compactEvery(ctx, tp, every, maxAge, show)
		})
	cmd.PreRunE = func(*cobra.Command, []string) error {
		if maxAge < 0 || every < 0 {
			return fmt.Errorf("projections compact: %w: --tombstone-max-age and --every must not be negative", topic.ErrInvalidCompaction)
		}
		return nil
	}
	cmd.Flags().DurationVar(&maxAge, "tombstone-max-age", 0, "also delete tombstones older than this that compaction and every consumer of the topic passed (0: keep tombstones)")
	cmd.Flags().DurationVar(&every, "every", 0, "compact every interval until interrupted, while this process holds the topic's compaction lease (0: once)")
	return cmd
}

// compactEvery runs tp's Compactor until ctx ends, printing each
// compaction it runs; a failed one is logged and tried again.
func compactEvery(ctx context.Context, tp *topic.ReadModelTopic, every, maxAge time.Duration, show func(topic.Compacted) error) error {
	c, err := topic.NewCompactor(tp, topic.CompactorOptions{Interval: every, TombstoneMaxAge: maxAge,
		OnCompact: func(res topic.Compacted, err error) {
			if err == nil {
				_ = show(res)
			}
		}})
	if err != nil {
		return err
	}
	slog.Info("compacting", "topic", tp.Name(), "every", every, "owner", c.Owner())
	return c.Run(ctx)
}
