package main

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tidemarkdb/tidemark/conformance/harness"
	"github.com/tidemarkdb/tidemark/core/consumer"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/eventstore"
	"github.com/tidemarkdb/tidemark/core/projection"
	"github.com/tidemarkdb/tidemark/core/schema"
)

type cliOpened struct{}

type cliModel struct{ N int }

// TestProjectionsCommands runs `tidemark projections` on SQLite: a bad
// name is refused before any SQL, status only reads, rebuild needs the
// shadow table a store creates, accept clears a DECLARATION_CHANGED halt
// (the fingerprint moved after ";"), rebuild begins a replay under a new
// epoch.
func TestProjectionsCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: opens a database through the plugin")
	}
	ctx := context.Background()
	prov := harness.NewProvider()
	t.Cleanup(func() { prov.Close() })
	f := newCLIFixture(t, prov, harness.EngineSQLite)
	reg := consumer.NewRegistry(f.e, nil)
	cli := func(args ...string) (string, error) {
		return run(t, projectionsCmd(), append(args, f.args...)...)
	}
	if _, err := cli("status", "bad\xffname"); !errors.Is(err, consumer.ErrInvalidName) {
		t.Errorf("status of an invalid name: %v, want ErrInvalidName", err)
	}
	out, err := cli("status", "account-summary")
	if err != nil || !strings.Contains(out, "fingerprint\tnone") || !strings.Contains(out, "rebuild\tnone in progress (epoch 0)") {
		t.Fatalf("status: %v %q", err, out)
	}
	if _, err := cli("status", "no-such"); !errors.Is(err, consumer.ErrNotFound) {
		t.Errorf("status of an unknown projection: %v, want ErrNotFound", err)
	}
	if _, err := reg.Lookup(ctx, "projection", "no-such"); !errors.Is(err, consumer.ErrNotFound) {
		t.Errorf("status created a consumer: %v", err)
	}
	if fp, err := reg.Fingerprint(ctx, f.e.DB, f.id); err != nil || fp != "" {
		t.Errorf("status wrote a fingerprint %q (%v)", fp, err)
	}
	if _, err := cli("rebuild", "account-summary"); !errors.Is(err, projection.ErrNoShadow) {
		t.Errorf("rebuild before any store opened: %v, want ErrNoShadow", err)
	}
	p := projection.New[cliModel]("account-summary", nil)
	projection.On(p, func(cliOpened, *cliModel) error { return nil })
	e2, err := engine.Open(ctx, f.e.DB, *f.e.Cat, engine.Config{Partitions: 16, QueryTables: []schema.QueryTable{p.QueryTable()}})
	if err != nil {
		t.Fatal(err)
	}
	st, err := projection.Open(ctx, e2, p) // creates the shadow, stores the fingerprint
	if err != nil {
		t.Fatal(err)
	}
	if err := reg.Halt(ctx, f.id, consumer.DeclarationChanged); err != nil {
		t.Fatal(err)
	}
	if out, err := cli("accept", "account-summary"); err != nil || !strings.Contains(out, "accept projection/account-summary") {
		t.Fatalf("accept: %v %q", err, out)
	}
	if c, _ := reg.Get(ctx, f.id); c.State != consumer.Running {
		t.Errorf("after accept the consumer is %s, want running", c.State)
	}
	if fp, err := reg.Fingerprint(ctx, f.e.DB, f.id); err != nil || fp != ";"+st.Fingerprint() {
		t.Errorf("fingerprint after accept %q (%v), want %q", fp, err, ";"+st.Fingerprint())
	}
	out, err = cli("rebuild", "account-summary")
	if err != nil || !strings.Contains(out, "replaying under epoch 1 (event-store through ") {
		t.Fatalf("rebuild: %v %q", err, out)
	}
	rp, err := reg.ReplayOf(ctx, f.e.DB, f.id)
	if err != nil || !rp.Replaying || rp.Epoch != 1 || rp.Through[engine.EventStoreTopic] != f.mark {
		t.Errorf("after rebuild the replay is %+v (%v), want epoch 1 through %d", rp, err, f.mark)
	}
	if out, err := cli("status", "account-summary", "--json"); err != nil || !strings.Contains(out, `"replaying": true`) {
		t.Errorf("status --json during the rebuild: %v %q", err, out)
	}

	// --wait returns once the projection's runner has replayed and switched.
	waited := make(chan string, 1)
	go func() {
		out, err := cli("rebuild", "account-summary", "--wait", "--poll", "10ms")
		if err != nil {
			out = "error: " + err.Error()
		}
		waited <- out
	}()
	opts, err := st.Options(consumer.EventStore(eventstore.New(e2, nil), nil))
	if err != nil {
		t.Fatal(err)
	}
	// Most of the 16 partitions hold no event: the replay's catch-up must
	// not wait for the interval at which empty stretches are saved.
	opts.EmptySaveInterval = time.Hour
	runner, err := consumer.NewRunner(ctx, consumer.NewRegistry(e2, nil), opts)
	if err != nil {
		t.Fatal(err)
	}
	for polls := 0; ; polls++ {
		if polls == 500 { // a bound against hanging: the switch takes a few polls
			t.Fatalf("rebuild --wait still waiting after %d polls of the projection's runner", polls)
		}
		select {
		case out := <-waited:
			if !strings.Contains(out, "switched projection/account-summary") {
				t.Fatalf("rebuild --wait: %q", out)
			}
			if rp, err := reg.ReplayOf(ctx, f.e.DB, f.id); err != nil || rp.Replaying || rp.Epoch < 2 {
				t.Errorf("after rebuild --wait the replay is %+v (%v), want switched at epoch 2 or later", rp, err)
			}
			return
		case <-time.After(20 * time.Millisecond):
		}
		if _, err := runner.Poll(ctx); err != nil {
			t.Fatalf("the projection's runner: %v", err)
		}
	}
}
