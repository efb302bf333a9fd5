// Command tidemark-dialect-mariadb serves the mariadb dialect to a Tidemark host.
package main

import (
	"github.com/tidemarkdb/tidemark/core/dialect/plugin"
	"github.com/tidemarkdb/tidemark/plugins/mariadb"
)

func main() { plugin.Serve(mariadb.New()) }
