package main

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/tidemarkdb/tidemark/conformance/harness"
	"github.com/tidemarkdb/tidemark/core/consumer"
)

// TestConsumersRebuildCommand runs `tidemark consumers rebuild` on SQLite:
// --begin makes the consumer REBUILDING under epoch 1 with every
// checkpoint reset, --complete makes it run again; each step from the
// wrong state, or neither or both flags, is an error that changes nothing.
func TestConsumersRebuildCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("opens a database through the plugin")
	}
	prov := harness.NewProvider()
	t.Cleanup(func() { prov.Close() })
	f := newCLIFixture(t, prov, harness.EngineSQLite)
	reg := consumer.NewRegistry(f.e, nil)
	cli := func(args ...string) (string, error) {
		return run(t, consumersCmd(), append(args, f.args...)...)
	}
	for _, args := range [][]string{{"rebuild", cliRef}, {"rebuild", cliRef, "--begin", "--complete"}, {"rebuild", cliRef, "--complete"}} {
		if out, err := cli(args...); err == nil {
			t.Errorf("%s: no error (%s)", strings.Join(args, " "), out)
		}
	}
	if c, _ := reg.Get(context.Background(), f.id); c.State != consumer.Running || c.Epoch != 0 {
		t.Fatalf("refused steps changed the consumer: %+v", c)
	}
	out, err := cli("rebuild", cliRef, "--begin")
	if err != nil || !strings.Contains(out, "rebuild "+cliRef+": state REBUILDING, epoch 1;") || !strings.Contains(out, "--complete") {
		t.Fatalf("rebuild --begin: %v %q", err, out)
	}
	cps, err := reg.Checkpoints(context.Background(), f.id)
	if err != nil {
		t.Fatal(err)
	}
	for _, cp := range cps {
		if cp.Recorded || cp.Epoch != 1 {
			t.Errorf("after --begin checkpoint %d is at %d (recorded %v) under epoch %d, want reset under 1", cp.Partition, cp.Position, cp.Recorded, cp.Epoch)
		}
	}
	if _, err := cli("rebuild", cliRef, "--begin"); !errors.Is(err, consumer.ErrTransition) {
		t.Errorf("a second --begin: %v, want ErrTransition", err)
	}
	out, err = cli("rebuild", cliRef, "--complete", "--json")
	if err != nil || !strings.Contains(out, `"state": "RUNNING"`) || !strings.Contains(out, `"epoch": 1`) {
		t.Fatalf("rebuild --complete --json: %v %q", err, out)
	}
	if c, _ := reg.Get(context.Background(), f.id); c.State != consumer.Running || c.Epoch != 1 {
		t.Errorf("after --complete the consumer is %+v, want running under epoch 1", c)
	}
}
