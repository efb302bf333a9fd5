package conformance

import (
	"context"
	"errors"
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

// testSourceNamesDifferingInCase: a subscription to two sources whose
// names differ only in case is refused with *consumer.InvalidNameError
// before any SQL, on every engine (one comparing names ignoring case would
// keep one checkpoint for both): no consumer row is made.
func testSourceNamesDifferingInCase(t T, env *Env) {
	_, e := openStore(t, env)
	ctx := context.Background()
	reg := consumer.NewRegistry(e, nil)
	_, err := reg.Subscribe(ctx, "projection", "by-source-case",
		consumer.SourceRef{Name: "src", Partitions: 1}, consumer.SourceRef{Name: "Src", Partitions: 1})
	ie := expectErr[*consumer.InvalidNameError](t, err, "subscribe to src and Src")
	if !errors.Is(err, consumer.ErrInvalidName) || ie.Value != "Src" || !strings.Contains(err.Error(), `"src"`) {
		t.Fatalf("subscribe to src and Src: %v, want the source Src refused naming src", err)
	}
	if _, err := reg.Lookup(ctx, "projection", "by-source-case"); !errors.Is(err, consumer.ErrNotFound) {
		t.Fatalf("after the refused subscribe: %v, want no consumer (nothing written)", err)
	}
}
