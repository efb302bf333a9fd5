// Command tidemark-dialect-mysql serves the mysql dialect to a Tidemark host.
package main

import (
	"github.com/tidemarkdb/tidemark/core/dialect/plugin"
	"github.com/tidemarkdb/tidemark/plugins/mysql"
)

func main() { plugin.Serve(mysql.New()) }
