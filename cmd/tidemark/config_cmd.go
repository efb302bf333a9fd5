package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/tidemarkdb/tidemark/config"
)

func configCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Check the configuration file (tidemark.yaml)",
	}
	cmd.AddCommand(configValidateCmd())
	return groupCmd(cmd)
}

func configValidateCmd() *cobra.Command {
	var s settings
	var offline bool
	cmd := &cobra.Command{
		Use:   "validate",
		Short: "Refuse unknown keys and invalid names with the file, line and reason; plan the schema with the dialect",
		Long: `Loads the configuration (--config, else $TIDEMARK_CONFIG, else ./tidemark.yaml)
and refuses unknown keys, invalid names and values with the file, line and
reason. Then it loads the dialect plugin and plans the whole schema (nothing
is executed), so names too long for that engine are refused too; --offline
skips that step. The DSN is never printed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			path := config.Find(s.configPath)
			if path == "" {
				return fmt.Errorf("no configuration file: pass --config, set $%s, or create ./%s (see docs/configuration.md)", config.EnvFile, config.DefaultFile)
			}
			c, err := config.Load(path)
			if err != nil {
				return err
			}
			dialectNote := "not checked against the dialect (--offline)"
			if !offline {
				l, err := load(cmd.Context(), pluginOf(c))
				if err != nil {
					return fmt.Errorf("%s: loading the dialect plugin: %w", path, err)
				}
				if err := c.CheckDialect(&l.Catalogue); err != nil {
					return err
				}
				dialectNote = "schema planned with dialect " + l.Catalogue.Identity.Name + " " + l.Catalogue.Identity.Version
			}
			dsn := "none"
			switch {
			case c.DSNEnv != "":
				dsn = "from $" + c.DSNEnv
			case c.DSN != "":
				dsn = "in the file (not shown; prefer dsn_env)"
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: valid: %d aggregates, %d query tables, %d saga tables; DSN %s; %s\n",
				path, len(c.Aggregates), len(c.QueryTables), len(c.SagaTables), dsn, dialectNote)
			return nil
		},
	}
	cmd.Flags().StringVar(&s.configPath, "config", "", "configuration file (default: $"+config.EnvFile+", else ./"+config.DefaultFile+")")
	cmd.Flags().BoolVar(&offline, "offline", false, "do not load the dialect plugin")
	return cmd
}
