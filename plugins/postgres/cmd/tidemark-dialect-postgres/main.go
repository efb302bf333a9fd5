// Command tidemark-dialect-postgres serves the postgres dialect to a Tidemark host.
package main

import (
	"github.com/tidemarkdb/tidemark/core/dialect/plugin"
	"github.com/tidemarkdb/tidemark/plugins/postgres"
)

func main() { plugin.Serve(postgres.New()) }
