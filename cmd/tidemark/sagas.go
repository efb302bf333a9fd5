package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/saga"
)

// sagasCmd is `tidemark sagas …`: what the saga tables hold (status,
// list), read on an engine that creates nothing, and the retention of
// completed sagas (purge). No saga declaration is needed.
func sagasCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sagas",
		Short: "Saga instances and deadlines: status, list, purge",
		Long: `Counts of saga instances per saga type (active, completed, pending deadlines),
the deadline lock's holder, a list of instances, and the purge of completed
sagas past an age on the database clock (never one with a pending deadline).`,
	}
	cmd.AddCommand(sagasStatusCmd(), sagasListCmd(), sagasPurgeCmd())
	return groupCmd(cmd)
}

// sagaRun is what a sagas subcommand does with the engine.
type sagaRun func(ctx context.Context, e *engine.Engine, out io.Writer, asJSON bool) error

// sagaCmd builds a sagas subcommand on an engine opened with mode
// (ReadOnly or Existing: neither creates anything).
func sagaCmd(use, short string, mode engine.Config, flags func(*cobra.Command), run sagaRun) *cobra.Command {
	var s settings
	var asJSON bool
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withEngine(cmd.Context(), &s, mode, func(e *engine.Engine) error {
				return run(cmd.Context(), e, cmd.OutOrStdout(), asJSON)
			})
		},
	}
	s.register(cmd, withPlugin|withDB|withNames)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON instead of a table")
	if flags != nil {
		flags(cmd)
	}
	return cmd
}

func sagasStatusCmd() *cobra.Command {
	return sagaCmd("status", "Instances per saga type, pending deadlines and the deadline lock", engine.Config{ReadOnly: true}, nil,
		func(ctx context.Context, e *engine.Engine, out io.Writer, asJSON bool) error {
			st, err := saga.ReadStatus(ctx, e)
			if err != nil || asJSON {
				return orJSON(out, st, err)
			}
			w := tabular(out)
			fmt.Fprintln(w, "SAGA TYPE\tTABLE\tACTIVE\tCOMPLETED\tDEADLINES\tOVERDUE\tNEXT DUE")
			for _, t := range st.Types {
				next := "-"
				if t.NextDue != nil {
					next = t.NextDue.UTC().Format(time.RFC3339)
				}
				fmt.Fprintf(w, "%s\t%s\t%d\t%d\t%d\t%d\t%s\n", t.SagaType, t.Table, t.Active, t.Completed, t.Deadlines, t.Overdue, next)
			}
			if err := w.Flush(); err != nil {
				return err
			}
			if st.Lock == nil {
				_, err = fmt.Fprintln(out, "deadline lock: never taken")
				return err
			}
			state := "expired"
			if st.Lock.Live {
				state = "held"
			}
			_, err = fmt.Fprintf(out, "deadline lock: %s by %s until %s\n", state, st.Lock.Owner, st.Lock.ExpiresAt.UTC().Format(time.RFC3339))
			return err
		})
}

func sagasListCmd() *cobra.Command {
	var sagaType string
	var limit int
	return sagaCmd("list", "List saga instances (id, saga type, saga id, version, completed)", engine.Config{ReadOnly: true},
		func(cmd *cobra.Command) {
			cmd.Flags().StringVar(&sagaType, "saga-type", "", "only instances of this saga type")
			cmd.Flags().IntVar(&limit, "limit", 100, "at most this many instances")
		},
		func(ctx context.Context, e *engine.Engine, out io.Writer, asJSON bool) error {
			if limit <= 0 {
				return fmt.Errorf("--limit must be positive, got %d", limit)
			}
			list, err := saga.List(ctx, e, sagaType, limit)
			if err != nil || asJSON {
				return orJSON(out, list, err)
			}
			w := tabular(out)
			fmt.Fprintln(w, "SAGA TYPE\tSAGA ID\tVERSION\tCOMPLETED\tTABLE\tID")
			for _, l := range list {
				fmt.Fprintf(w, "%s\t%s\t%d\t%v\t%s\t%s\n", l.SagaType, l.SagaID, l.Version, l.Completed, l.Table, l.ID)
			}
			return w.Flush()
		})
}

func sagasPurgeCmd() *cobra.Command {
	var sagaType, table string
	var olderThan time.Duration
	return sagaCmd("purge", "Delete completed sagas of a type older than an age (database clock), never one with a pending deadline",
		engine.Config{Existing: true},
		func(cmd *cobra.Command) {
			cmd.Flags().StringVar(&sagaType, "saga-type", "", "the saga type to purge (required)")
			cmd.Flags().StringVar(&table, "table", "", "its instance table (default the configured saga instances table)")
			cmd.Flags().DurationVar(&olderThan, "older-than", 0, "completed longer ago than this (required, e.g. 720h)")
			_ = cmd.MarkFlagRequired("saga-type")
			_ = cmd.MarkFlagRequired("older-than")
		},
		func(ctx context.Context, e *engine.Engine, out io.Writer, asJSON bool) error {
			t := table
			if t == "" {
				t = e.Names.Shared["saga_instances_table"]
			}
			n, err := saga.PurgeType(ctx, e, t, sagaType, olderThan)
			if err != nil || asJSON {
				return orJSON(out, map[string]int64{"purged": n}, err)
			}
			_, err = fmt.Fprintf(out, "purged %d completed %s sagas from %s\n", n, sagaType, t)
			return err
		})
}

// orJSON returns err, or prints v as JSON.
func orJSON(out io.Writer, v any, err error) error {
	if err != nil {
		return err
	}
	return printJSON(out, v)
}
