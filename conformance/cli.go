package conformance

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"sync"

	"github.com/tidemarkdb/tidemark/core/dialect/plugin"
)

// cliT runs a test outside `go test`: Fatalf and Skipf end the test's
// goroutine as testing.T does.
type cliT struct {
	mu       sync.Mutex
	failed   bool
	skipped  bool
	reason   string
	log      io.Writer
	cleanups []func()
}

func (c *cliT) Helper() {}
func (c *cliT) Logf(f string, a ...any) {
	if c.log != nil {
		fmt.Fprintf(c.log, "    "+f+"\n", a...)
	}
}
func (c *cliT) Errorf(f string, a ...any) {
	c.mu.Lock()
	c.failed = true
	if c.reason == "" {
		c.reason = fmt.Sprintf(f, a...)
	}
	c.mu.Unlock()
	c.Logf(f, a...)
}
func (c *cliT) Fatalf(f string, a ...any) { c.Errorf(f, a...); runtime.Goexit() }
func (c *cliT) Fatal(a ...any)            { c.Fatalf("%s", fmt.Sprint(a...)) }
func (c *cliT) Skipf(f string, a ...any) {
	c.mu.Lock()
	c.skipped = true
	if c.reason == "" {
		c.reason = fmt.Sprintf(f, a...)
	}
	c.mu.Unlock()
	runtime.Goexit()
}
func (c *cliT) Failed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.failed
}
func (c *cliT) Cleanup(f func()) { c.cleanups = append(c.cleanups, f) }
func (c *cliT) noteSkip(r string) {
	c.mu.Lock()
	c.reason = r
	c.mu.Unlock()
}

// RunCLI runs the suite without the testing package (for `tidemark
// conformance`), printing progress to out, and returns the matrix.
func RunCLI(ctx context.Context, target Target, out io.Writer) (*Matrix, error) {
	loaded, err := plugin.Load(ctx, target.Load)
	if err != nil {
		return nil, fmt.Errorf("loading plugin: %w", err)
	}
	name := target.Name
	if name == "" {
		name = loaded.Catalogue.Identity.Name
	}
	fmt.Fprintf(out, "%s: %s\n", name, FeaturesOf(loaded.Catalogue))
	m := &Matrix{}
	for _, test := range Tests() {
		if !selected(target.Only, test.Name) {
			continue
		}
		c := &cliT{log: out}
		done := make(chan struct{})
		go func() {
			defer close(done)
			env := newEnv(c, target, loaded.Catalogue, nil)
			test.Run(c, env)
		}()
		<-done
		for i := len(c.cleanups) - 1; i >= 0; i-- {
			c.cleanups[i]()
		}
		r := Result{Target: name, Test: test.Name, Status: Pass}
		switch {
		case c.failed:
			r.Status, r.Reason = Fail, c.reason
		case c.skipped:
			r.Status, r.Reason = Skip, c.reason
		}
		m.Add(r)
		fmt.Fprintf(out, "%-48s %s\n", test.Name, r.Status)
	}
	return m, nil
}
