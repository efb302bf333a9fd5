package conformance

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/eventstore"
	"github.com/tidemarkdb/tidemark/core/hwm"
	"github.com/tidemarkdb/tidemark/internal/testtime"
)

// testDSNParamsTwoEngines: where the dialect declares DSN parameters its
// guarantees rely on (SQLite: a busy timeout and BEGIN IMMEDIATE), a DSN
// given without them and passed through ApplyDSNParams serves two engines
// on one database: concurrent appends of both and the advancer of one all
// succeed, and the mark reaches the last position. Without the parameters
// the appends and the advancer's cycles fail with SQLITE_BUSY.
func testDSNParamsTwoEngines(t T, env *Env) {
	id := env.Catalogue.Identity
	if len(id.DSNParams) == 0 {
		skipf(t, "%s declares no DSN parameters its guarantees rely on", id.Name)
	}
	base, _, _ := strings.Cut(env.DSN, "?") // the database as a user names it, no parameters
	dsn := id.ApplyDSNParams(env.Driver, base)
	ctx, cancel := testtime.Context(context.Background(), 5*time.Minute)
	defer cancel()
	var stores []*eventstore.Store
	var engines []*engine.Engine
	for range 2 {
		db, err := sql.Open(env.Driver, dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		e, err := engine.Open(ctx, db, env.Catalogue, defaultConfig(env))
		if err != nil {
			t.Fatalf("engine.Open on %s: %v", dsn, err)
		}
		t.Cleanup(func() { e.Close() })
		engines, stores = append(engines, e), append(stores, eventstore.New(e, nil))
	}
	adv := hwm.New(engines[1], hwm.Options{})
	const writers, appends = 8, 100
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		errs   []error
		last   int64
		cycles int
	)
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		errs = append(errs, err)
	}
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := stores[w%2]
			for i := range appends {
				res, err := s.Append(ctx, eventstore.Stream{AggregateType: "bank.Account", AggregateID: fmt.Sprintf("dsn-%d-%d", w, i),
					Events: []eventstore.Event{ev("t.Busy", `{"n":1}`)}})
				if err != nil {
					fail(fmt.Errorf("writer %d append %d: %w", w, i, err))
					return
				}
				mu.Lock()
				last = max(last, res.Positions[0])
				mu.Unlock()
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	for running := true; running; {
		select {
		case <-done:
			running = false
		default:
		}
		if _, err := adv.Cycle(ctx); err != nil {
			fail(fmt.Errorf("advancer cycle %d: %w", cycles, err))
			break
		}
		cycles++
	}
	<-done
	if len(errs) > 0 {
		t.Fatalf("on %s (the parameters applied to %s): %d failures, the first: %v", dsn, base, len(errs), errs[0])
	}
	if m, err := advanceUntil(ctx, adv, stores[1], last); err != nil || m < last {
		t.Fatalf("mark %d after the appends, want %d: %v", m, last, err)
	}
}
