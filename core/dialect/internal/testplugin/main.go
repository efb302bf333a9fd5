// Command testplugin serves the fixture dialect as a plugin process for the
// transport tests.
//
// If a file named <its own path>.mark exists, it first creates
// <its own path>.started, so a test can tell whether it was ever run.
package main

import (
	"os"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/dialect/internal/fixture"
)

func main() {
	if exe, err := os.Executable(); err == nil {
		if _, err := os.Stat(exe + ".mark"); err == nil {
			_ = os.WriteFile(exe+".started", []byte("started\n"), 0o644)
		}
	}
	dialect.Serve(fixture.New())
}
