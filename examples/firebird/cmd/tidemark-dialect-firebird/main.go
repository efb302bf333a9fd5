// Command tidemark-dialect-firebird serves the Firebird 3 example dialect to
// a Tidemark host.
package main

import (
	"github.com/tidemarkdb/tidemark/core/dialect/plugin"
	"github.com/tidemarkdb/tidemark/examples/firebird"
)

func main() { plugin.Serve(firebird.New()) }
