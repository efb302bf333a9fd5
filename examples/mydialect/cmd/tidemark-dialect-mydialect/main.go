// Command tidemark-dialect-mydialect serves the mydialect example dialect to
// a Tidemark host.
package main

import (
	"github.com/tidemarkdb/tidemark/core/dialect/plugin"
	"github.com/tidemarkdb/tidemark/examples/mydialect"
)

func main() { plugin.Serve(mydialect.New()) }
