package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/tidemarkdb/tidemark/core/consumer"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/eventstore"
	"github.com/tidemarkdb/tidemark/core/topic"
)

// consumersCmd is `tidemark consumers …`: the operator controls of
// durable consumers (docs/consumers.md, "Operating consumers"). Every
// subcommand reads the DSN and dialect from tidemark.yaml or flags, as
// migrate does, and prints a table or, with --json, JSON.
func consumersCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "consumers",
		Short: "Operate durable consumers: list, status, pause, resume, dead letters, skip, unsubscribe",
		Long: `Operator controls of durable consumers. A consumer is named <type>/<name>,
e.g. projection/account-summary. An operation only changes rows; the runner of
every instance acts on them at its next poll.`,
	}
	cmd.AddCommand(consumersListCmd(), consumersStatusCmd(), consumersPauseCmd(), consumersResumeCmd(),
		deadLettersCmd(), consumersSkipCmd(), consumersUnsubscribeCmd(), consumersRebuildCmd())
	return groupCmd(cmd)
}

// operatorRun is what a consumers subcommand does with the operator.
type operatorRun func(ctx context.Context, op *consumer.Operator, out io.Writer, asJSON bool, args []string) error

// operatorCmd builds a subcommand that changes rows: it opens the
// configured database and an engine on its existing schema, runs run with
// the operator, and closes them.
func operatorCmd(use, short string, args cobra.PositionalArgs, run operatorRun) *cobra.Command {
	return opCmd(use, short, args, engine.Config{Existing: true}, run)
}

// readerCmd builds a subcommand that only reads: its engine is read-only.
func readerCmd(use, short string, args cobra.PositionalArgs, run operatorRun) *cobra.Command {
	return opCmd(use, short, args, engine.Config{ReadOnly: true}, run)
}

// opCmd builds an operator subcommand whose engine opens with mode's
// ReadOnly or Existing: neither creates anything.
func opCmd(use, short string, args cobra.PositionalArgs, mode engine.Config, run operatorRun) *cobra.Command {
	var s settings
	var asJSON bool
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  args,
		RunE: func(cmd *cobra.Command, args []string) error {
			return withOperator(cmd.Context(), &s, mode, func(op *consumer.Operator) error {
				return run(cmd.Context(), op, cmd.OutOrStdout(), asJSON, args)
			})
		},
	}
	s.register(cmd, withPlugin|withDB|withNames)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON instead of a table")
	return cmd
}

// withOperator opens the configured database and an engine that verifies
// the schema and creates nothing (mode: ReadOnly or Existing), and hands fn
// the operator. A missing schema is an error naming the redacted DSN.
func withOperator(ctx context.Context, s *settings, mode engine.Config, fn func(*consumer.Operator) error) error {
	return withEngine(ctx, s, mode, func(e *engine.Engine) error { return fn(consumer.NewRegistry(e, nil).Operator()) })
}

// withEngine is withOperator's work: the configured database and an
// engine that creates nothing, handed to fn.
func withEngine(ctx context.Context, s *settings, mode engine.Config, fn func(*engine.Engine) error) error {
	c, err := s.resolve()
	if err != nil {
		return err
	}
	dsn, err := dsnOf(c)
	if err != nil {
		return err
	}
	if dsn == "" {
		return fmt.Errorf("no database: pass --dsn, or set dsn_env (or dsn) in %s", orDefault(c.File))
	}
	l, err := load(ctx, pluginOf(c))
	if err != nil {
		return err
	}
	driver := c.Driver
	if driver == "" {
		driver = l.Catalogue.Identity.DriverName
	}
	if err := sqliteFileExists(driver, dsn); err != nil {
		return fmt.Errorf("no Tidemark schema at %s (create it with `tidemark migrate`): %w", redactDSN(dsn), err)
	}
	db, err := sql.Open(driver, l.Catalogue.Identity.ApplyDSNParams(driver, dsn))
	if err != nil {
		return fmt.Errorf("opening the %s driver: %w", driver, err)
	}
	defer db.Close()
	cfg := c.EngineConfig() // Partitions 0 unless configured: the persisted count is adopted
	cfg.ReadOnly, cfg.Existing = mode.ReadOnly, mode.Existing
	e, err := engine.Open(ctx, db, l.Catalogue, cfg)
	if errors.Is(err, engine.ErrSchemaMissing) {
		return fmt.Errorf("no Tidemark schema at %s (create it with `tidemark migrate`): %w", redactDSN(dsn), err)
	}
	if err != nil {
		return err
	}
	defer e.Close()
	return fn(e)
}

func consumersListCmd() *cobra.Command {
	return readerCmd("list", "List every consumer with its state, lag and undelivered counts", cobra.NoArgs,
		func(ctx context.Context, op *consumer.Operator, out io.Writer, asJSON bool, _ []string) error {
			list, err := op.List(ctx)
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(out, nonNil(list))
			}
			return printList(out, list)
		})
}

func consumersStatusCmd() *cobra.Command {
	return readerCmd("status <type>/<name>", "Show a consumer's state, checkpoints, marks, lag, undelivered counts and lease ownership", cobra.ExactArgs(1),
		func(ctx context.Context, op *consumer.Operator, out io.Writer, asJSON bool, args []string) error {
			ref, err := consumer.ParseRef(args[0])
			if err != nil {
				return err
			}
			st, err := op.Status(ctx, ref)
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(out, st)
			}
			return printStatus(out, st)
		})
}

// changeRun adapts an operation on one consumer to an operatorRun that
// prints what it changed: "<what> <type>/<name>: <changes>".
func changeRun(what string, do func(ctx context.Context, op *consumer.Operator, ref consumer.Ref) (consumer.Changes, error)) operatorRun {
	return changeRunOn(what, "", do)
}

// changeRunOn is changeRun for an operation on one source of the consumer
// ("" for none): the text names it after the consumer, the JSON in
// "source". Operator input is printed as text, never used as a format.
func changeRunOn(what, source string, do func(ctx context.Context, op *consumer.Operator, ref consumer.Ref) (consumer.Changes, error)) operatorRun {
	return func(ctx context.Context, op *consumer.Operator, out io.Writer, asJSON bool, args []string) error {
		ref, err := consumer.ParseRef(args[0])
		if err != nil {
			return err
		}
		ch, err := do(ctx, op, ref)
		if err != nil {
			return err
		}
		if asJSON {
			return printJSON(out, struct {
				Consumer  consumer.Ref     `json:"consumer"`
				Operation string           `json:"operation"`
				Source    string           `json:"source,omitempty"`
				Changes   consumer.Changes `json:"changes"`
			}{ref, what, source, ch})
		}
		line := what + " " + ref.String()
		if source != "" {
			line += " from " + source
		}
		_, err = fmt.Fprintln(out, line+": "+ch.String())
		return err
	}
}

func consumersPauseCmd() *cobra.Command {
	return operatorCmd("pause <type>/<name>", "Pause a running consumer (every instance stops at its next poll)", cobra.ExactArgs(1),
		changeRun("pause", func(ctx context.Context, op *consumer.Operator, ref consumer.Ref) (consumer.Changes, error) {
			return op.Pause(ctx, ref)
		}))
}

func consumersResumeCmd() *cobra.Command {
	var past bool
	cmd := operatorCmd("resume <type>/<name>", "Resume a paused or halted consumer (its poison message retried with a fresh budget, or with --past-poison skipped)", cobra.ExactArgs(1),
		func(ctx context.Context, op *consumer.Operator, out io.Writer, asJSON bool, args []string) error {
			what, do := "resume", op.Resume
			if past {
				what, do = "resume past poison", op.ResumePast
			}
			return changeRun(what, func(ctx context.Context, _ *consumer.Operator, ref consumer.Ref) (consumer.Changes, error) {
				return do(ctx, ref)
			})(ctx, op, out, asJSON, args)
		})
	cmd.Flags().BoolVar(&past, "past-poison", false, "resume a HALTED consumer past its poison messages: delete them and record skips")
	return cmd
}

func consumersSkipCmd() *cobra.Command {
	var s consumer.Skip
	var ahead bool
	cmd := operatorCmd("skip <type>/<name> --source S --partition P --position N (--key K | --every-key) [--ahead]",
		"Record a skip: every instance passes over that message (checked to exist; past the mark only with --ahead)", cobra.ExactArgs(1),
		func(ctx context.Context, op *consumer.Operator, out io.Writer, asJSON bool, args []string) error {
			return changeRun("skip", func(ctx context.Context, op *consumer.Operator, ref consumer.Ref) (consumer.Changes, error) {
				src, err := sourceOf(ctx, op.Engine(), s.Source)
				if err != nil {
					return consumer.Changes{}, err
				}
				return op.SkipMessage(ctx, ref, src, s, ahead)
			})(ctx, op, out, asJSON, args)
		})
	f := cmd.Flags()
	f.StringVar(&s.Source, "source", "", "the source (topic) of the message: "+engine.EventStoreTopic+" or "+topic.CaptureTopic)
	f.IntVar(&s.Partition, "partition", 0, "the partition the message is applied in")
	f.Int64Var(&s.Position, "position", 0, "the message's position")
	f.StringVar(&s.Key, "key", "", "the message's key (--key \"\" for a message without one)")
	f.BoolVar(&s.EveryKey, "every-key", false, "skip the message for every key")
	f.BoolVar(&ahead, "ahead", false, "allow a position past the source's mark (a message not yet readable)")
	for _, name := range []string{"source", "partition", "position"} {
		_ = cmd.MarkFlagRequired(name)
	}
	cmd.MarkFlagsMutuallyExclusive("key", "every-key")
	cmd.MarkFlagsOneRequired("key", "every-key")
	return cmd
}

// sourceOf is the source named name that the CLI can read: the event store
// or the capture topic.
func sourceOf(ctx context.Context, e *engine.Engine, name string) (consumer.Source, error) {
	switch name {
	case engine.EventStoreTopic:
		return consumer.EventStore(eventstore.New(e, nil), nil), nil
	case topic.CaptureTopic:
		t, err := topic.New(ctx, e)
		if err != nil {
			return nil, err
		}
		return consumer.Capture(t, nil), nil
	}
	return nil, fmt.Errorf("%w: source %q: the CLI checks messages of %s and %s only", consumer.ErrInvalidSkip, name, engine.EventStoreTopic, topic.CaptureTopic)
}

func consumersUnsubscribeCmd() *cobra.Command {
	var source string
	cmd := operatorCmd("unsubscribe <type>/<name> --source S", "Unsubscribe a consumer from a source: its checkpoints, undelivered rows and skips there go, its row with its last checkpoint", cobra.ExactArgs(1),
		func(ctx context.Context, op *consumer.Operator, out io.Writer, asJSON bool, args []string) error {
			return changeRunOn("unsubscribe", source, func(ctx context.Context, op *consumer.Operator, ref consumer.Ref) (consumer.Changes, error) {
				return op.Unsubscribe(ctx, ref, source)
			})(ctx, op, out, asJSON, args)
		})
	cmd.Flags().StringVar(&source, "source", "", "the source (topic) to unsubscribe from, e.g. "+engine.EventStoreTopic)
	_ = cmd.MarkFlagRequired("source")
	return cmd
}

func printJSON(out io.Writer, v any) error {
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// nonNil makes an empty list print as [] rather than null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
