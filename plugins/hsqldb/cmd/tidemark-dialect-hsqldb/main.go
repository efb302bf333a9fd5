// Command tidemark-dialect-hsqldb serves the hsqldb dialect to a Tidemark host.
package main

import (
	"github.com/tidemarkdb/tidemark/core/dialect/plugin"
	"github.com/tidemarkdb/tidemark/plugins/hsqldb"
)

func main() { plugin.Serve(hsqldb.New()) }
