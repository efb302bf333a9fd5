// Command testplugin serves the fixture dialect as a plugin process for the
// transport tests.
//
// If a file named <argv[0]>.mark exists, it first creates <argv[0]>.started,
// so a test can tell whether it was ever run. argv[0] is the path the host
// was asked to load; os.Executable would not do, since a pinned plugin is
// executed from a sealed in-memory copy (see core/dialect/plugin's verifiedBinary).
package main

import (
	"os"

	"github.com/tidemarkdb/tidemark/core/dialect/internal/fixture"
	"github.com/tidemarkdb/tidemark/core/dialect/plugin"
)

func main() {
	if exe := os.Args[0]; exe != "" {
		if _, err := os.Stat(exe + ".mark"); err == nil {
			_ = os.WriteFile(exe+".started", []byte("started\n"), 0o644)
		}
	}
	plugin.Serve(fixture.New())
}
