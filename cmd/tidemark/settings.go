package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tidemarkdb/tidemark/config"
)

// settings are what every command reads: tidemark.yaml (--config, else
// $TIDEMARK_CONFIG, else ./tidemark.yaml when present), then the flags the
// user gave, which override the file. A new command registers the groups it
// needs and calls resolve.
type settings struct {
	cmd        *cobra.Command
	configPath string

	dialect, plugin, sha256 string
	pluginDirs              []string

	dsn, driver string
	partitions  int

	prefix     string
	aggregates []string
}

// Flag groups a command registers.
const (
	withPlugin = 1 << iota
	withDB
	withNames
)

func (s *settings) register(cmd *cobra.Command, groups int) {
	s.cmd = cmd
	f := cmd.Flags()
	f.StringVar(&s.configPath, "config", "", "configuration file (default: $"+config.EnvFile+", else ./"+config.DefaultFile+" when present)")
	if groups&withPlugin != 0 {
		f.StringVar(&s.dialect, "dialect", "", "dialect name (finds tidemark-dialect-<name>, else a built-in; default: the configuration's, else sqlite)")
		f.StringVar(&s.plugin, "plugin", "", "explicit plugin binary (wins over --dialect)")
		f.StringSliceVar(&s.pluginDirs, "plugin-dir", nil, "directories searched first for plugin binaries (then $TIDEMARK_PLUGIN_PATH, then next to tidemark)")
		f.StringVar(&s.sha256, "sha256", "", "pin the plugin binary's SHA-256 (hex); a mismatch is refused")
	}
	if groups&withDB != 0 {
		f.StringVar(&s.dsn, "dsn", "", "data source name for the driver (default: the configuration's dsn or dsn_env)")
		f.StringVar(&s.driver, "driver", "", "database/sql driver (default: the configuration's, else the dialect's)")
	}
	if groups&withNames != 0 {
		f.StringVar(&s.prefix, "prefix", "", "table prefix for every prefixed area (e.g. ACME_); replaces the configuration's prefixes")
		f.StringSliceVar(&s.aggregates, "aggregate", nil, "aggregate with its own tables, as Namespace.Name (e.g. banking.BankAccount → BANK_ACCOUNT_EVENTS), added to the configuration's")
		f.IntVar(&s.partitions, "partitions", 0, "fixed partition count (default: the configuration's, else 16; verified against the database)")
	}
}

func (s *settings) changed(name string) bool {
	return s.cmd != nil && s.cmd.Flags().Changed(name)
}

// resolve loads the configuration and applies the flags given.
func (s *settings) resolve() (*config.Config, error) {
	c := &config.Config{}
	if path := config.Find(s.configPath); path != "" {
		var err error
		if c, err = config.Load(path); err != nil {
			return nil, err
		}
	}
	var flags []string
	set := func(name string, apply func()) {
		if s.changed(name) {
			apply()
			flags = append(flags, "--"+name)
		}
	}
	set("dialect", func() { c.Dialect = s.dialect })
	set("plugin", func() { c.Plugin.Path = s.plugin })
	set("plugin-dir", func() { c.Plugin.Dirs = s.pluginDirs })
	set("sha256", func() { c.Plugin.SHA256 = s.sha256 })
	set("driver", func() { c.Driver = s.driver })
	set("dsn", func() { c.DSN, c.DSNEnv = config.Secret(s.dsn), "" })
	set("partitions", func() { c.Partitions = s.partitions })
	set("prefix", func() { c.Prefix, c.Prefixes = s.prefix, nil })
	set("aggregate", func() {
		for _, a := range s.aggregates {
			c.Aggregates = append(c.Aggregates, config.Aggregate{Type: a, OwnTable: true})
		}
	})
	if len(flags) > 0 {
		if c.File == "" {
			c.File = "command line"
		} else {
			c.File += " with " + strings.Join(flags, ", ")
		}
		if err := c.Validate(); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// pluginOf is where the configuration says the dialect plugin is.
func pluginOf(c *config.Config) *pluginFlags {
	p := &pluginFlags{dialect: c.Dialect, path: c.Plugin.Path, dirs: c.Plugin.Dirs, sha256: c.Plugin.SHA256, dialectGiven: c.Dialect != ""}
	if p.dialect == "" {
		p.dialect = "sqlite"
	}
	return p
}

// dsnOf is the configured DSN ("" when none), never printed.
func dsnOf(c *config.Config) (string, error) {
	dsn, err := c.DSNValue()
	if err != nil {
		return "", fmt.Errorf("%s: %w", c.File, err)
	}
	return dsn, nil
}
