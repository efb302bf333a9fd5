package main

import (
	"context"
	"io"

	"github.com/spf13/cobra"

	"github.com/tidemarkdb/tidemark/core/consumer"
)

// deadLettersCmd is `tidemark consumers dead-letters [list|retry|delete]`.
// Without a subcommand it lists.
func deadLettersCmd() *cobra.Command {
	cmd := readerCmd("dead-letters <type>/<name>", "List a consumer's dead letters (subcommands retry and delete them)", cobra.ExactArgs(1), listDeadLetters)
	list := readerCmd("list <type>/<name>", "List a consumer's dead letters (DEAD_LETTER and DEAD_LETTER_KEY rows, without copies)", cobra.ExactArgs(1), listDeadLetters)
	cmd.AddCommand(list,
		selectorCmd("retry", "Retry dead letters with a fresh budget (a DEAD_LETTER_KEY key's held messages go back in line)",
			func(ctx context.Context, op *consumer.Operator, ref consumer.Ref, sel consumer.Selector) (consumer.Changes, error) {
				return op.RetryDeadLetters(ctx, ref, sel)
			}),
		selectorCmd("delete", "Delete dead letters and record skips for them (a DEAD_LETTER_KEY key's held messages go back in line)",
			func(ctx context.Context, op *consumer.Operator, ref consumer.Ref, sel consumer.Selector) (consumer.Changes, error) {
				return op.DeleteDeadLetters(ctx, ref, sel)
			}))
	return cmd
}

func listDeadLetters(ctx context.Context, op *consumer.Operator, out io.Writer, asJSON bool, args []string) error {
	ref, err := consumer.ParseRef(args[0])
	if err != nil {
		return err
	}
	dls, err := op.DeadLetters(ctx, ref)
	if err != nil {
		return err
	}
	if asJSON {
		return printJSON(out, nonNil(dls))
	}
	return printDeadLetters(out, dls)
}

// selectorCmd is retry or delete with --id, --source with --key, or --all.
func selectorCmd(name, short string, do func(context.Context, *consumer.Operator, consumer.Ref, consumer.Selector) (consumer.Changes, error)) *cobra.Command {
	var sel consumer.Selector
	var cmd *cobra.Command
	cmd = operatorCmd(name+" <type>/<name> (--id ID | --source S --key K | --all)", short, cobra.ExactArgs(1),
		func(ctx context.Context, op *consumer.Operator, out io.Writer, asJSON bool, args []string) error {
			sel.KeyGiven = cmd.Flags().Changed("key")
			return changeRun(name+" dead letters", func(ctx context.Context, op *consumer.Operator, ref consumer.Ref) (consumer.Changes, error) {
				return do(ctx, op, ref, sel)
			})(ctx, op, out, asJSON, args)
		})
	f := cmd.Flags()
	f.StringVar(&sel.ID, "id", "", "one dead letter, by its row id (see dead-letters list)")
	f.StringVar(&sel.Source, "source", "", "with --key: the source of the key's dead letters")
	f.StringVar(&sel.Key, "key", "", "every dead letter of this key (with --source)")
	f.BoolVar(&sel.All, "all", false, "every dead letter of the consumer")
	return cmd
}
