package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/tidemarkdb/tidemark/core/dialect/plugin"
	"github.com/tidemarkdb/tidemark/plugins/builtin"
)

func pluginsCmd() *cobra.Command {
	var dirs []string
	cmd := &cobra.Command{
		Use:   "plugins",
		Short: "List the dialect plugins found, with versions and capabilities",
		RunE: func(cmd *cobra.Command, _ []string) error {
			found := map[string]string{} // name → path
			search := append([]string{}, dirs...)
			search = append(search, filepath.SplitList(os.Getenv(plugin.PluginPathEnv))...)
			if exe, err := os.Executable(); err == nil {
				search = append(search, filepath.Dir(exe))
			}
			for _, d := range search {
				matches, _ := filepath.Glob(filepath.Join(d, plugin.PluginBinaryPrefix+"*"))
				for _, m := range matches {
					name := strings.TrimPrefix(filepath.Base(m), plugin.PluginBinaryPrefix)
					if _, ok := found[name]; !ok {
						found[name] = m
					}
				}
			}
			for _, n := range builtin.Names() {
				if _, ok := found[n]; !ok {
					found[n] = ""
				}
			}
			names := make([]string, 0, len(found))
			for n := range found {
				names = append(names, n)
			}
			sort.Strings(names)
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "DIALECT\tVERSION\tCONTRACT\tPOSITIONS\tDRIVER\tPLACEHOLDER\tSOURCE")
			for _, n := range names {
				opts := plugin.LoadOptions{Name: n, SelfServe: selfServe}
				src := "built-in (tidemark serves it out of process)"
				if p := found[n]; p != "" {
					opts.Path, src = p, p
				}
				l, err := plugin.Load(cmd.Context(), opts)
				if err != nil {
					fmt.Fprintf(w, "%s\t-\t-\t-\t-\t-\terror: %v\n", n, err)
					continue
				}
				id := l.Catalogue.Identity
				fmt.Fprintf(w, "%s\t%s\t%d\t%s\t%s\t%s\t%s\n", n, id.Version, id.ContractVersion, l.Catalogue.Positions, id.DriverName, id.Placeholder, src)
			}
			return w.Flush()
		},
	}
	cmd.Flags().StringSliceVar(&dirs, "plugin-dir", nil, "extra directories to search")
	return cmd
}
