// Command testhost is a host process for the transport tests.
//
//	testhost keep <plugin path>   loads the plugin with Keep, prints
//	                              "pid <plugin pid>" and blocks forever
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
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: testhost keep <plugin path> | testhost serve <name>")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "serve":
		if os.Args[2] == "failing" {
			dialect.Serve(failing{})
		}
		dialect.Serve(fixture.New())
	case "keep":
		l, err := dialect.Load(context.Background(), dialect.LoadOptions{Path: os.Args[2], Keep: true})
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
