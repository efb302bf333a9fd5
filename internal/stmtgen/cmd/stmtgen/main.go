// Command stmtgen writes core/stmt's generated files (run by go generate
// in core/stmt).
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/tidemarkdb/tidemark/internal/stmtgen"
)

func main() {
	dialectDir := flag.String("dialect", "../dialect", "core/dialect's source directory")
	out := flag.String("out", ".", "directory to write the generated files into")
	flag.Parse()
	if err := stmtgen.Write(*dialectDir, *out); err != nil {
		fmt.Fprintln(os.Stderr, "stmtgen:", err)
		os.Exit(1)
	}
}
