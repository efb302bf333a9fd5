package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tidemarkdb/tidemark/conformance"
	"github.com/tidemarkdb/tidemark/conformance/harness"
)

// dsnEnv is where the harness looks for a server per engine.
var dsnEnv = map[string]string{
	harness.EnginePostgres:  "TIDEMARK_POSTGRES_DSN",
	harness.EngineMariaDB:   "TIDEMARK_MARIADB_DSN",
	harness.EngineMySQL:     "TIDEMARK_MYSQL_DSN",
	harness.EngineSQLServer: "TIDEMARK_SQLSERVER_DSN",
}

func conformanceCmd() *cobra.Command {
	var s settings
	var engineName string
	var only []string
	cmd := &cobra.Command{
		Use:   "conformance",
		Short: "Run the conformance suite against a dialect plugin on a real database",
		Long: `Runs the shared conformance suite through the plugin, out of process.

Reads dialect, plugin, engine, driver and DSN from tidemark.yaml; flags
override them. With a DSN, each test gets a fresh database created on that server (or the
DSN itself when the account cannot create databases). Without it, the suite
starts a local server from this machine's installation (PostgreSQL, MariaDB,
H2/HSQLDB through the JDBC bridge), or uses Docker where a daemon answers;
otherwise every test is reported as skipped, with the reason.`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			c, err := s.resolve()
			if err != nil {
				return err
			}
			dsn, err := dsnOf(c)
			if err != nil {
				return err
			}
			driver := c.Driver
			p := pluginOf(c)
			// Load the plugin first: a refused pin or a missing plugin fails
			// before any server is started.
			l, err := load(ctx, p)
			if err != nil {
				return err
			}
			if driver == "" {
				// The first of the plugin's drivers this binary links.
				var ok bool
				if driver, ok = l.Catalogue.Identity.PickDriver(sql.Drivers()); !ok {
					return fmt.Errorf("plugin %s runs with driver %q (or %v); this binary links none of them (%v): run conformance.Run from a Go test that imports the driver, or pass --driver",
						l.Catalogue.Identity.Name, l.Catalogue.Identity.DriverName, l.Catalogue.Identity.Drivers, sql.Drivers())
				}
			}
			if !cmd.Flags().Changed("engine") && c.Engine != "" {
				engineName = c.Engine
			}
			if engineName == "" {
				engineName = l.Catalogue.Identity.Name
			}
			if dsn != "" {
				env, ok := dsnEnv[engineName]
				if !ok {
					return fmt.Errorf("--dsn is supported for engines %v; for %s the suite provides its own databases", keysOf(dsnEnv), engineName)
				}
				os.Setenv(env, dsn)
			}
			prov := harness.NewProvider()
			defer prov.Close()
			out := cmd.OutOrStdout()
			target := conformance.Target{Load: p.options(), Driver: driver, Only: only,
				Fresh: func(ctx context.Context) (string, func(), error) {
					d, err := prov.Open(ctx, engineName, driver)
					if err != nil {
						return "", nil, err
					}
					return d.DSN, nil, nil
				}}
			probe, err := prov.Open(ctx, engineName, driver)
			if err != nil && !errors.As(err, new(*harness.Skipped)) && strings.Contains(err.Error(), "unknown engine") {
				return fmt.Errorf("%w; pass --engine (one of %s) to say which database the plugin %s runs on", err, strings.Join(harness.Engines, ", "), l.Catalogue.Identity.Name)
			}
			var skipped *harness.Skipped
			switch {
			case errors.As(err, &skipped):
				fmt.Fprintf(out, "%s: every test skipped: %s\n", engineName, skipped.Reason)
				fmt.Fprintf(out, "0 passed, 0 failed, %d skipped\n", len(conformance.Tests()))
				return nil
			case err != nil:
				return err
			}
			fmt.Fprintf(out, "database: %s %s\n", probe.Source, probe.Note)
			m, err := conformance.RunCLI(ctx, target, out)
			if err != nil {
				return err
			}
			fmt.Fprint(out, "\n"+m.String())
			if _, failed, _ := m.Counts(); failed > 0 {
				return fmt.Errorf("%d conformance tests failed", failed)
			}
			return nil
		},
	}
	s.register(cmd, withPlugin|withDB)
	cmd.Flags().StringVar(&engineName, "engine", "", "database engine when it differs from the dialect's name (e.g. --dialect mysql --engine mariadb, or a third-party plugin on h2)")
	cmd.Flags().StringSliceVar(&only, "only", nil, "run only tests whose names start with these prefixes")
	return cmd
}

func keysOf(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
