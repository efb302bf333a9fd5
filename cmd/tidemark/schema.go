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

// nameFlags configure table naming.
type nameFlags struct {
	prefix     string
	aggregates []string
}

func (n *nameFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&n.prefix, "prefix", "", "table prefix for every prefixed area (e.g. ACME_)")
	cmd.Flags().StringSliceVar(&n.aggregates, "aggregate", nil, "aggregate with its own tables, as Namespace.Name (e.g. banking.BankAccount → BANK_ACCOUNT_EVENTS)")
}

func (n *nameFlags) config() (schema.Config, error) {
	c := schema.Config{}
	if n.prefix != "" {
		c.Prefixes = map[dialect.Area]string{}
		for _, a := range []dialect.Area{dialect.AreaEventSourcing, dialect.AreaPartitioning, dialect.AreaMessaging, dialect.AreaCQRS, dialect.AreaSaga} {
			c.Prefixes[a] = n.prefix
		}
	}
	for _, a := range n.aggregates {
		ns, name, ok := strings.Cut(a, ".")
		if !ok {
			ns, name = "", a
		}
		c.Aggregates = append(c.Aggregates, schema.Aggregate{Namespace: ns, Name: name, OwnTable: true})
	}
	return c, nil
}

func schemaCmd() *cobra.Command {
	var p pluginFlags
	var n nameFlags
	var format, out string
	cmd := &cobra.Command{
		Use:   "schema",
		Short: "Print or write the schema for a migration tool (sql, template, flyway, liquibase, golang-migrate, goose)",
		RunE: func(cmd *cobra.Command, _ []string) error {
			l, err := load(cmd.Context(), &p)
			if err != nil {
				return err
			}
			cfg, err := n.config()
			if err != nil {
				return err
			}
			names, err := schema.Resolve(cfg)
			if err != nil {
				return err
			}
			files, err := schema.Export(&l.Catalogue, names, nil, cfg.Prefixes[dialect.AreaCQRS], format)
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
	p.register(cmd)
	n.register(cmd)
	cmd.Flags().StringVar(&format, "format", "sql", "sql | template | flyway | liquibase | golang-migrate | goose")
	cmd.Flags().StringVar(&out, "out", "", "directory to write files to (default: standard output)")
	return cmd
}

func migrateCmd() *cobra.Command {
	var p pluginFlags
	var n nameFlags
	var dsn, driver string
	var partitions int
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "Create the schema on a database (idempotent) and seed the core's rows",
		RunE: func(cmd *cobra.Command, _ []string) error {
			if dsn == "" {
				return fmt.Errorf("--dsn is required")
			}
			l, err := load(cmd.Context(), &p)
			if err != nil {
				return err
			}
			if driver == "" {
				driver = l.Catalogue.Identity.DriverName
			}
			db, err := sql.Open(driver, dsn)
			if err != nil {
				return err
			}
			defer db.Close()
			cfg, err := n.config()
			if err != nil {
				return err
			}
			e, err := engine.Open(cmd.Context(), db, l.Catalogue, engine.Config{Names: cfg, Partitions: partitions})
			if err != nil {
				return err
			}
			defer e.Close()
			fmt.Fprintf(cmd.OutOrStdout(), "schema ready: %d objects (%s, %d partitions)\n", len(schema.Objects(e.Cat, e.Names)), l.Catalogue.Identity.Name, e.Partitions)
			return nil
		},
	}
	p.register(cmd)
	n.register(cmd)
	cmd.Flags().StringVar(&dsn, "dsn", "", "data source name for the driver")
	cmd.Flags().StringVar(&driver, "driver", "", "database/sql driver (default: the dialect's; postgres: pgx or postgres)")
	cmd.Flags().IntVar(&partitions, "partitions", 0, "fixed partition count (default 16; verified against the database)")
	return cmd
}
