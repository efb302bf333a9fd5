package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tidemarkdb/tidemark/conformance"
	"github.com/tidemarkdb/tidemark/conformance/harness"
	"github.com/tidemarkdb/tidemark/core/dialect"
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
	var jdbc jdbcFlags
	cmd := &cobra.Command{
		Use:   "conformance",
		Short: "Run the conformance suite against a dialect plugin on a real database",
		Long: `Runs the shared conformance suite through the plugin, out of process.

Reads dialect, plugin, engine, driver and DSN from tidemark.yaml; flags
override them. With a DSN, each test gets a fresh database created on that server (or the
DSN itself when the account cannot create databases). Without it, the suite
starts a local server from this machine's installation (PostgreSQL, MariaDB,
H2/HSQLDB through the JDBC bridge), or uses Docker where a daemon answers;
otherwise every test is reported as skipped, with the reason.

--jdbc-jar and --jdbc-url run a plugin for any JDBC engine: the CLI starts
the JDBC bridge with the driver's jars and gives each test a new database,
the URL with a fresh name in place of {db}:

  tidemark conformance --plugin ./tidemark-dialect-derby \
    --jdbc-jar derby.jar --jdbc-url 'jdbc:derby:memory:{db};create=true'`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			engineFlag := ""
			if cmd.Flags().Changed("engine") {
				engineFlag = engineName
			}
			return runConformance(cmd.Context(), &s, engineFlag, only, &jdbc, cmd.OutOrStdout())
		},
	}
	s.register(cmd, withPlugin|withDB)
	cmd.Flags().StringVar(&engineName, "engine", "", "database engine when it differs from the dialect's name (e.g. --dialect mysql --engine mariadb, or a third-party plugin on h2)")
	cmd.Flags().StringSliceVar(&only, "only", nil, "run only tests whose names start with these prefixes")
	cmd.Flags().StringSliceVar(&jdbc.jars, "jdbc-jar", nil, "JDBC driver jars: run the suite through a JDBC bridge started for them (with --jdbc-url)")
	cmd.Flags().StringVar(&jdbc.url, "jdbc-url", "", "JDBC URL of a new database, with {db} where each test's database name goes (with --jdbc-jar)")
	cmd.Flags().StringVar(&jdbc.user, "jdbc-user", "", "user for --jdbc-url")
	cmd.Flags().StringVar(&jdbc.password, "jdbc-password", "", "password for --jdbc-url")
	cmd.Flags().StringSliceVar(&jdbc.jvmArgs, "jvm-arg", nil, "extra JVM options for the bridge (e.g. --jvm-arg=-Xmx1g)")
	return cmd
}

// runConformance runs the suite for the configured plugin; engineFlag is
// --engine when given.
func runConformance(ctx context.Context, s *settings, engineFlag string, only []string, jdbc *jdbcFlags, out io.Writer) error {
	c, err := s.resolve()
	if err != nil {
		return err
	}
	dsn, err := dsnOf(c)
	if err != nil {
		return err
	}
	p := pluginOf(c)
	if jdbc.set() {
		if err := jdbc.check(c.Driver, engineFlag, dsn); err != nil {
			return err
		}
	}
	// Load the plugin first: a refused pin or a missing plugin fails
	// before any server is started.
	l, err := load(ctx, p)
	if err != nil {
		return err
	}
	if jdbc.set() {
		return runJDBC(ctx, jdbc, conformance.Target{Load: p.options(), Only: only}, out)
	}
	engineName, driver, err := conformanceEngine(c.Engine, engineFlag, c.Driver, l.Catalogue.Identity)
	if err != nil {
		return err
	}
	if err := runnableHere(engineName, driver, p); err != nil {
		return err
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
	return runSuite(ctx, target, out)
}

// conformanceEngine picks the engine (--engine, then the configuration, then
// the plugin's name) and the driver (the configured one, else the first of the
// plugin's drivers this binary links).
func conformanceEngine(configured, engineFlag, driver string, id dialect.Identity) (string, string, error) {
	if driver == "" {
		var ok bool
		if driver, ok = id.PickDriver(sql.Drivers()); !ok {
			return "", "", fmt.Errorf("plugin %s runs with driver %q (or %v); this binary links none of them (%v): run conformance.Run from a Go test that imports the driver, or pass --driver",
				id.Name, id.DriverName, id.Drivers, sql.Drivers())
		}
	}
	engineName := engineFlag
	if engineName == "" {
		engineName = configured
	}
	if engineName == "" {
		engineName = id.Name
	}
	return engineName, driver, nil
}

// runSuite runs the suite through the CLI's test runner, prints the
// matrix and fails when a test failed.
func runSuite(ctx context.Context, target conformance.Target, out io.Writer) error {
	m, err := conformance.RunCLI(ctx, target, out)
	if err != nil {
		return err
	}
	fmt.Fprint(out, "\n"+m.String())
	if _, failed, _ := m.Counts(); failed > 0 {
		return fmt.Errorf("%d conformance tests failed", failed)
	}
	return nil
}

// NoDriverError says the CLI cannot run the suite on an engine: it links no
// database/sql driver of that name, or knows no way to start or reach the
// engine. The suite then runs from the author's own Go test, which imports
// the driver (conformance.Run).
type NoDriverError struct {
	Engine  string
	Driver  string
	Plugin  string
	Reason  string
	Drivers []string // the drivers this binary links
}

func (e *NoDriverError) Error() string {
	return fmt.Sprintf("cannot run the conformance suite on %s from this binary: %s (it links the drivers %s and starts the engines %s). "+
		"Run it from a Go test that imports your driver instead:\n\n"+
		"\tm := conformance.Run(t, conformance.Target{\n"+
		"\t\tLoad:   plugin.LoadOptions{Path: %q},\n"+
		"\t\tDriver: %q,\n"+
		"\t\tFresh:  func(ctx context.Context) (string, func(), error) { /* start or reach the server, return a new empty database's DSN */ },\n"+
		"\t})\n\n"+
		"docs/writing-a-dialect.md shows a whole test with a server starter",
		e.Engine, e.Reason, strings.Join(e.Drivers, ", "), strings.Join(harness.Engines, ", "), e.Plugin, e.Driver)
}

// runnableHere refuses, before any server starts, an engine the CLI has no
// driver for or cannot provide databases for.
func runnableHere(engineName, driver string, p *pluginFlags) error {
	linked := sql.Drivers()
	has := false
	for _, d := range linked {
		has = has || d == driver
	}
	known := false
	for _, e := range harness.Engines {
		known = known || e == engineName
	}
	plugin := p.options().Path
	if plugin == "" {
		plugin = "./tidemark-dialect-" + p.options().Name
	}
	switch {
	case !has:
		return &NoDriverError{Engine: engineName, Driver: driver, Plugin: plugin, Drivers: linked,
			Reason: fmt.Sprintf("it has no database/sql driver %q", driver)}
	case !known:
		return &NoDriverError{Engine: engineName, Driver: driver, Plugin: plugin, Drivers: linked,
			Reason: fmt.Sprintf("it knows no way to start or reach a %s server", engineName)}
	}
	return nil
}

func keysOf(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
