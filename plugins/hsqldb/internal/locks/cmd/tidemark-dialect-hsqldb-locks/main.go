// Command tidemark-dialect-hsqldb-locks serves the test-only HSQLDB variant
// for LOCKS transaction control.
package main

import (
	"github.com/tidemarkdb/tidemark/core/dialect/plugin"
	"github.com/tidemarkdb/tidemark/plugins/hsqldb/internal/locks"
)

func main() { plugin.Serve(locks.New()) }
