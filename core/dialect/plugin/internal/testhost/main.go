// Command testhost is a host process for the transport tests.
//
//	testhost keep <plugin path> [sha256]
//	                              loads the plugin with Keep (pinned when a
//	                              digest is given), prints "pid <plugin pid>"
//	                              and blocks forever
//	testhost serve <name>         serves the fixture dialect (the
//	                              re-executed half of LoadOptions.SelfServe);
//	                              name "failing" serves one whose Describe fails
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/dialect/internal/fixture"
	"github.com/tidemarkdb/tidemark/core/dialect/plugin"
)

func main() {
	if len(os.Args) != 3 && (len(os.Args) != 4 || os.Args[1] != "keep") {
		fmt.Fprintln(os.Stderr, "usage: testhost keep <plugin path> [sha256] | testhost serve <name>")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "serve":
		if os.Args[2] == "failing" {
			plugin.Serve(failing{})
		}
		plugin.Serve(fixture.New())
	case "keep":
		opts := plugin.LoadOptions{Path: os.Args[2], Keep: true}
		if len(os.Args) == 4 {
			opts.SHA256 = os.Args[3]
		}
		l, err := plugin.Load(context.Background(), opts)
		if err != nil {
			fmt.Fprintln(os.Stderr, "load:", err)
			os.Exit(1)
		}
		fmt.Printf("pid %d\n", l.PID)
		for {
			time.Sleep(time.Hour)
		}
	default:
		fmt.Fprintln(os.Stderr, "unknown mode", os.Args[1])
		os.Exit(2)
	}
}

// failing is a dialect whose Describe fails.
type failing struct{}

func (failing) Describe(context.Context, dialect.DescribeRequest) (dialect.DescribeResponse, error) {
	return dialect.DescribeResponse{}, errors.New("fixture: asked to fail")
}
