// Command tidemark is the Tidemark CLI: list dialect plugins, export or
// apply the schema, run the conformance suite against a plugin, and a demo.
// Every command reads tidemark.yaml (see docs/configuration.md); flags
// override it.
//
// Built-in dialects are served by re-executing this binary as the plugin
// process, so `go run ./cmd/tidemark demo` needs no prior build and still
// talks to its dialect out of process.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tidemarkdb/tidemark/conformance"
	"github.com/tidemarkdb/tidemark/core/dialect/plugin"
	"github.com/tidemarkdb/tidemark/plugins/builtin"

	// database/sql drivers of the built-ins' targets; the core imports none.
	_ "github.com/tidemarkdb/tidemark/plugins/builtin/drivers"
)

// serveCommand is the hidden subcommand a re-executed tidemark serves a
// built-in dialect with.
const serveCommand = "serve-dialect"

// pluginFlags locate a dialect plugin (see settings for where they come from).
type pluginFlags struct {
	dialect string
	path    string
	dirs    []string
	sha256  string
	// dialectGiven: an explicit plugin names itself; the dialect only
	// checks it when given.
	dialectGiven bool
}

func (p *pluginFlags) options() plugin.LoadOptions {
	name := p.dialect
	if p.path != "" && !p.dialectGiven {
		name = ""
	}
	return plugin.LoadOptions{Name: name, Path: p.path, PluginDirs: p.dirs, SHA256: p.sha256, SelfServe: selfServe}
}

// selfServe re-executes this binary as the plugin for a built-in dialect.
func selfServe(name string) (*exec.Cmd, bool) {
	if _, ok := builtin.Lookup(name); !ok {
		return nil, false
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, false
	}
	return exec.Command(exe, serveCommand, name), true
}

// load loads the plugin p names; a dialect found nowhere is an error that
// lists the dialects this binary knows.
func load(ctx context.Context, p *pluginFlags) (*plugin.Loaded, error) {
	l, err := plugin.Load(ctx, p.options())
	var nf *plugin.NotFoundError
	if errors.As(err, &nf) {
		return nil, fmt.Errorf("%w; known dialects: %s (built in), or any tidemark-dialect-<name> plugin on the search path (`tidemark plugins` lists them)",
			err, strings.Join(builtin.Names(), ", "))
	}
	return l, err
}

func main() {
	// A worker process of a multi-process conformance test (concurrent
	// first starts, partition races) runs its job and exits here.
	conformance.MaybeWorker()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	root := &cobra.Command{
		Use:           "tidemark",
		Short:         "Tidemark: an event store and messaging storage engine on any SQL database",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(demoCmd(), schemaCmd(), migrateCmd(), pluginsCmd(), conformanceCmd(), configCmd(), consumersCmd(), projectionsCmd(), sagasCmd(), consoleServeCmd(), serveCmd())
	err := root.ExecuteContext(ctx)
	stop()
	plugin.CleanupClients()
	if err != nil {
		fmt.Fprintln(os.Stderr, "tidemark:", err)
		os.Exit(1)
	}
}

// groupCmd makes cmd, a command that only groups subcommands, print its
// help without arguments and refuse an unknown subcommand with an error
// (a non-zero exit) after the help, where cobra would print the help and
// succeed.
func groupCmd(cmd *cobra.Command) *cobra.Command {
	cmd.Args = cobra.ArbitraryArgs
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return cmd.Help()
		}
		cmd.SetOut(cmd.ErrOrStderr())
		_ = cmd.Help()
		return fmt.Errorf("unknown command %q for %q", args[0], cmd.CommandPath())
	}
	return cmd
}

func serveCmd() *cobra.Command {
	return &cobra.Command{
		Use:    serveCommand + " NAME",
		Hidden: true,
		Args:   cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			d, ok := builtin.Lookup(args[0])
			if !ok {
				return fmt.Errorf("no built-in dialect %q (built-ins: %s)", args[0], strings.Join(builtin.Names(), ", "))
			}
			plugin.Serve(d)
			return nil
		},
	}
}
