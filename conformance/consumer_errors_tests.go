package conformance

import (
	"context"
	"strings"

	"github.com/tidemarkdb/tidemark/core/consumer"
	"github.com/tidemarkdb/tidemark/core/engine"
)

// testErrorsNameConsumers: the registry's errors name a consumer as the
// operator typed it, type/name, with its id beside it, not by its id
// alone: a refused transition (Resume, BeginRebuild, CompleteRebuild of a
// consumer in the wrong state).
func testErrorsNameConsumers(t T, env *Env) {
	_, e := openStore(t, env)
	ctx := context.Background()
	reg := consumer.NewRegistry(e, nil)
	c, err := reg.Subscribe(ctx, "projection", "orders-by-day", consumer.SourceRef{Name: engine.EventStoreTopic, Partitions: e.Partitions})
	if err != nil {
		t.Fatalf("subscribe: %v", err)
	}
	want := "consumer projection/orders-by-day"
	cases := map[string]func() error{
		"Resume of a running consumer":          func() error { return reg.Resume(ctx, c.ID) },
		"CompleteRebuild of a running consumer": func() error { return reg.CompleteRebuild(ctx, c.ID, 1) },
		"BeginRebuild of a rebuilding consumer": func() error {
			if _, err := reg.BeginRebuild(ctx, c.ID); err != nil {
				return err
			}
			_, err := reg.BeginRebuild(ctx, c.ID)
			return err
		},
	}
	for _, what := range []string{"Resume of a running consumer", "CompleteRebuild of a running consumer", "BeginRebuild of a rebuilding consumer"} {
		err := cases[what]()
		if err == nil {
			t.Errorf("%s: no error", what)
			continue
		}
		if !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), c.ID) {
			t.Errorf("%s: %q does not name the consumer as %q with its id %s beside", what, err, want, c.ID)
		}
	}
}
