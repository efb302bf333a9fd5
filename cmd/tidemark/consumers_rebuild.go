package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/tidemarkdb/tidemark/core/consumer"
)

// consumersRebuildCmd is `tidemark consumers rebuild <type>/<name>
// --begin|--complete`, the two steps of a rebuild around the application's
// own emptying of its read model (docs/consumers.md, "Rebuilding").
func consumersRebuildCmd() *cobra.Command {
	var begin, complete bool
	cmd := operatorCmd("rebuild <type>/<name> (--begin | --complete)",
		"Rebuild a consumer: --begin fences every poll in flight and resets its checkpoints (then empty the read model), --complete makes it replay from the start",
		cobra.ExactArgs(1),
		func(ctx context.Context, op *consumer.Operator, out io.Writer, asJSON bool, args []string) error {
			if begin == complete {
				return errors.New("rebuild: pass exactly one of --begin and --complete")
			}
			ref, err := consumer.ParseRef(args[0])
			if err != nil {
				return err
			}
			step, next := op.CompleteRebuild, "every instance replays it from the start at its next poll"
			if begin {
				step = op.BeginRebuild
				next = "no poll begun before applies or saves any more; empty the read model, then run: tidemark consumers rebuild " + ref.String() + " --complete"
			}
			st, err := step(ctx, ref)
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(out, st)
			}
			_, err = fmt.Fprintf(out, "rebuild %s: state %s, epoch %d; %s\n", ref, st.State, st.Epoch, next)
			return err
		})
	cmd.Flags().BoolVar(&begin, "begin", false, "mark the consumer REBUILDING under a new epoch and reset its checkpoints")
	cmd.Flags().BoolVar(&complete, "complete", false, "make a REBUILDING consumer run again from the start")
	return cmd
}
