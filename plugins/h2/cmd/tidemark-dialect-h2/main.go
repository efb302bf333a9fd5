// Command tidemark-dialect-h2 serves the h2 dialect to a Tidemark host.
package main

import (
	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/plugins/h2"
)

func main() { dialect.Serve(h2.New()) }
