package eventstore_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/tidemarkdb/tidemark/core/dialect/plugin"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/eventstore"
	"github.com/tidemarkdb/tidemark/core/hwm"
	"github.com/tidemarkdb/tidemark/plugins/sqlite"
)

// BenchmarkFollow catches up on 20,000 stored events with Follow (pages of
// 5,000, SQLite in process), streamed (the default) and buffered (the page
// read whole first, as Follow did before): ns, bytes and allocations per
// event.
func BenchmarkFollow(b *testing.B) {
	const total, batch = 20000, 500
	ctx := context.Background()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(b.TempDir(), "es.db")+"?_pragma=journal_mode(WAL)&_pragma=busy_timeout(10000)&_txlock=immediate")
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	loaded, err := plugin.InProcess(ctx, sqlite.New())
	if err != nil {
		b.Fatal(err)
	}
	e, err := engine.Open(ctx, db, loaded.Catalogue, engine.Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	adv := hwm.New(e, hwm.Options{})
	store := eventstore.New(e, adv)
	payload := []byte(`{"amount":125.5,"currency":"EUR","note":"benchmark event payload of a typical size"}`)
	for i := 0; i < total; i += batch {
		evs := make([]eventstore.Event, batch)
		for j := range evs {
			evs[j] = eventstore.Event{Type: "bench.Deposited", Payload: payload}
		}
		if _, err := store.Append(ctx, eventstore.Stream{AggregateType: "bench.Account", AggregateID: fmt.Sprintf("acc-%d", i), Events: evs}); err != nil {
			b.Fatal(err)
		}
	}
	for moved := true; moved; {
		if moved, err = adv.Cycle(ctx); err != nil {
			b.Fatal(err)
		}
	}
	errDone := errors.New("caught up")
	for _, buffered := range []bool{false, true} {
		name := "streamed"
		if buffered {
			name = "buffered"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				n := 0
				err := store.Follow(ctx, 0, eventstore.FollowOptions{PageSize: 5000, Buffered: buffered}, func(eventstore.Recorded) error {
					if n++; n == total {
						return errDone
					}
					return nil
				})
				if !errors.Is(err, errDone) {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*total), "ns/event")
		})
	}
}
