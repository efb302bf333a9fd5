package main

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/schema"
)

func schemaCmd() *cobra.Command {
	var s settings
	var format, out string
	cmd := &cobra.Command{
		Use:   "schema",
		Short: "Print or write the schema for a migration tool (sql, template, flyway, liquibase, golang-migrate, goose)",
		Long: `Prints or writes the schema of the configuration: shared tables, every
aggregate's own tables, query tables with their columns and saga tables.

With --out and a migration tool's format, the directory may hold earlier
exports (and your own migrations): only what is new is added, numbered above
every version already there; a file whose content would change is refused,
by name, and nothing is written. See docs/migrations.md.`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := s.resolve()
			if err != nil {
				return err
			}
			l, err := load(cmd.Context(), pluginOf(c))
			if err != nil {
				return err
			}
			if err := c.CheckDialect(&l.Catalogue); err != nil {
				return err
			}
			ec := c.EngineConfig()
			names, err := schema.Resolve(ec.Names)
			if err != nil {
				return err
			}
			prefix := ec.Names.Prefixes[dialect.AreaCQRS]
			if out != "" && format != "sql" && format != "template" {
				written, err := schema.ExportDir(out, &l.Catalogue, names, ec.QueryTables, prefix, format)
				if err != nil {
					return err
				}
				if len(written) == 0 {
					fmt.Fprintf(cmd.ErrOrStderr(), "%s is up to date: nothing new to export\n", out)
					return nil
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "wrote %d files to %s: %s\n", len(written), out, strings.Join(written, ", "))
				return nil
			}
			files, err := schema.Export(&l.Catalogue, names, ec.QueryTables, prefix, format)
			if err != nil {
				return err
			}
			if out == "" {
				for _, f := range files {
					if len(files) > 1 {
						fmt.Fprintf(cmd.OutOrStdout(), "-- ===== %s =====\n", f.Name)
					}
					fmt.Fprintln(cmd.OutOrStdout(), f.Content)
				}
				return nil
			}
			if err := os.MkdirAll(out, 0o755); err != nil {
				return err
			}
			for _, f := range files {
				if err := os.WriteFile(filepath.Join(out, f.Name), []byte(f.Content), 0o644); err != nil {
					return err
				}
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "wrote %d files to %s\n", len(files), out)
			return nil
		},
	}
	s.register(cmd, withPlugin|withNames)
	cmd.Flags().StringVar(&format, "format", "sql", "sql | template | flyway | liquibase | golang-migrate | goose")
	cmd.Flags().StringVar(&out, "out", "", "directory to write files to (default: standard output)")
	return cmd
}

func migrateCmd() *cobra.Command {
	var s settings
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "Create the schema on a database (idempotent) and seed the core's rows",
		RunE: func(cmd *cobra.Command, _ []string) error {
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
			l, err := load(cmd.Context(), pluginOf(c))
			if err != nil {
				return err
			}
			driver := c.Driver
			if driver == "" {
				driver = l.Catalogue.Identity.DriverName
			}
			db, err := sql.Open(driver, l.Catalogue.Identity.ApplyDSNParams(driver, dsn))
			if err != nil {
				return fmt.Errorf("opening the %s driver: %w", driver, err)
			}
			defer db.Close()
			e, err := engine.Open(cmd.Context(), db, l.Catalogue, c.EngineConfig())
			if err != nil {
				return err
			}
			defer e.Close()
			fmt.Fprintf(cmd.OutOrStdout(), "schema ready: %d objects and %d query tables (%s, %d partitions)\n",
				len(schema.Objects(e.Cat, e.Names)), len(c.QueryTables), l.Catalogue.Identity.Name, e.Partitions)
			return nil
		},
	}
	s.register(cmd, withPlugin|withDB|withNames)
	return cmd
}

func orDefault(file string) string {
	if file == "" {
		return "tidemark.yaml"
	}
	return file
}
