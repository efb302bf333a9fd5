package main

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tidemarkdb/tidemark/core/consumer"
	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/projection"
)

// projectionsCmd is `tidemark projections status|rebuild|accept|compact <name>`:
// a projection's rebuild without downtime and its declaration
// fingerprint (docs/projections.md, "Rebuilds").
func projectionsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "projections",
		Short: "Operate projections: status, rebuild without downtime, accept a changed declaration, compact",
		Long: `Operator controls of projections by name (the consumer projection/<name>).
rebuild begins a rebuild the projection's running instances replay and switch;
accept clears a DECLARATION_CHANGED halt without a rebuild;
compact deletes the superseded states of its read-model topic.`,
	}
	cmd.AddCommand(projectionsStatusCmd(), projectionsRebuildCmd(), projectionsAcceptCmd(), projectionsCompactCmd())
	return groupCmd(cmd)
}

// projectionRun is what a projections subcommand does: op on the engine,
// cqrsPrefix the configured prefix of the query tables.
type projectionRun func(ctx context.Context, op *consumer.Operator, cqrsPrefix string, out io.Writer, asJSON bool, name string) error

// projectionCmd builds a projections subcommand on one projection name,
// its engine opened with mode (ReadOnly for a read, Existing for a
// change: neither creates anything).
func projectionCmd(use, short string, mode engine.Config, run projectionRun) *cobra.Command {
	var s settings
	var asJSON bool
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := projection.CheckName(args[0]); err != nil {
				return err
			}
			c, err := s.resolve()
			if err != nil {
				return err
			}
			prefix := c.EngineConfig().Names.Prefixes[dialect.AreaCQRS]
			return withOperator(cmd.Context(), &s, mode, func(op *consumer.Operator) error {
				return run(cmd.Context(), op, prefix, cmd.OutOrStdout(), asJSON, args[0])
			})
		},
	}
	s.register(cmd, withPlugin|withDB|withNames)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON instead of text")
	return cmd
}

func projectionsStatusCmd() *cobra.Command {
	cmd := projectionCmd("status <name>", "Show a projection's consumer status, declaration fingerprints and rebuild progress", engine.Config{ReadOnly: true},
		func(ctx context.Context, op *consumer.Operator, _ string, out io.Writer, asJSON bool, name string) error {
			st, err := projection.StatusOf(ctx, op, name)
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(out, st)
			}
			fmt.Fprintf(out, "fingerprint\t%s\n", orText(st.Fingerprint, "none (stored at the next start)"))
			fmt.Fprintf(out, "previous\t%s\n", orText(st.Previous, "none"))
			fmt.Fprintf(out, "rebuild\t%s\n", replayText(st.Replay))
			fmt.Fprintln(out)
			return printStatus(out, st.Consumer)
		})
	return cmd
}

func projectionsRebuildCmd() *cobra.Command {
	var table string
	var wait bool
	var poll time.Duration
	cmd := projectionCmd("rebuild <name>", "Begin a rebuild without downtime: the running instances replay into a shadow and switch once caught up", engine.Config{Existing: true},
		func(ctx context.Context, op *consumer.Operator, prefix string, out io.Writer, asJSON bool, name string) error {
			e := op.Engine()
			if table == "" {
				if qt, err := e.QueryTable(name); err == nil {
					table = qt.Table
				}
			}
			rp, err := projection.BeginRebuildByName(ctx, e, name, table, prefix)
			if err != nil {
				return err
			}
			if !asJSON {
				if _, err := fmt.Fprintf(out, "rebuild projection/%s: %s; readers keep the current read models until the switch\n", name, replayText(rp)); err != nil {
					return err
				}
			}
			if wait {
				if rp, err = awaitSwitch(ctx, op, name, rp.Epoch, poll); err != nil {
					return err
				}
				if !asJSON {
					_, err = fmt.Fprintf(out, "switched projection/%s: readers see the rebuilt read models (epoch %d)\n", name, rp.Epoch)
					return err
				}
			}
			if asJSON {
				return printJSON(out, rp)
			}
			return nil
		})
	cmd.Flags().StringVar(&table, "table", "", "the projection's query table when it is not the default name (WithTable)")
	cmd.Flags().BoolVar(&wait, "wait", false, "wait until the projection's running instances have replayed and switched (Ctrl-C stops waiting, not the rebuild)")
	cmd.Flags().DurationVar(&poll, "poll", 500*time.Millisecond, "with --wait, how often the rebuild's progress is read")
	return cmd
}

// awaitSwitch reads projection name's rebuild until the replay of epoch
// (or a later one) has switched. A consumer that halts meanwhile ends the
// wait with its reason: its instances apply nothing until it resumes.
func awaitSwitch(ctx context.Context, op *consumer.Operator, name string, epoch int64, poll time.Duration) (consumer.Replay, error) {
	for {
		st, err := projection.StatusOf(ctx, op, name)
		if err != nil {
			return consumer.Replay{}, err
		}
		if st.Replay.Epoch >= epoch && !st.Replay.Replaying {
			return st.Replay, nil
		}
		if st.Consumer.State == consumer.Halted {
			return st.Replay, fmt.Errorf("projection %q halted (%s) during its rebuild: resume it to finish the replay", name, st.Consumer.HaltReason)
		}
		select {
		case <-ctx.Done():
			return st.Replay, fmt.Errorf("projection %q: stopped waiting for the rebuild of epoch %d (it goes on): %w", name, epoch, ctx.Err())
		case <-time.After(poll):
		}
	}
}

func projectionsAcceptCmd() *cobra.Command {
	cmd := projectionCmd("accept <name>", "Accept a changed declaration without a rebuild (clears DECLARATION_CHANGED)", engine.Config{Existing: true},
		func(ctx context.Context, op *consumer.Operator, _ string, out io.Writer, asJSON bool, name string) error {
			if err := projection.AcceptByName(ctx, op.Engine(), name); err != nil {
				return err
			}
			if asJSON {
				return printJSON(out, struct {
					Projection string `json:"projection"`
					Operation  string `json:"operation"`
				}{name, "accept"})
			}
			_, err := fmt.Fprintf(out, "accept projection/%s: the declaration its next start opens is stored as its fingerprint; a DECLARATION_CHANGED halt is cleared\n", name)
			return err
		})
	return cmd
}

// replayText is a rebuild's replay as one line.
func replayText(rp consumer.Replay) string {
	if !rp.Replaying {
		return fmt.Sprintf("none in progress (epoch %d)", rp.Epoch)
	}
	srcs := make([]string, 0, len(rp.Through))
	for s, t := range rp.Through {
		srcs = append(srcs, fmt.Sprintf("%s through %d", s, t))
	}
	sort.Strings(srcs)
	state := "replaying"
	if rp.CaughtUp {
		state = "caught up, switching"
	}
	return fmt.Sprintf("%s under epoch %d (%s)", state, rp.Epoch, strings.Join(srcs, ", "))
}

func orText(s, none string) string {
	if s == "" {
		return none
	}
	return s
}
