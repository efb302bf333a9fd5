// Command tidemark-dialect-h2 serves the h2 dialect to a Tidemark host.
package main

import (
	"github.com/tidemarkdb/tidemark/core/dialect/plugin"
	"github.com/tidemarkdb/tidemark/plugins/h2"
)

func main() { plugin.Serve(h2.New()) }
