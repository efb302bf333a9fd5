package eventstore_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"

	_ "modernc.org/sqlite"

	"github.com/tidemarkdb/tidemark/core/dialect/plugin"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/eventstore"
	"github.com/tidemarkdb/tidemark/core/hwm"
	"github.com/tidemarkdb/tidemark/core/schema"
	"github.com/tidemarkdb/tidemark/plugins/sqlite"
)

// Append to two aggregates (one on its own table), publish with the
// high-water mark and read back in global order. The dialect is linked in
// process here; applications load it with plugin.Load.
func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "tidemark-example-")
	defer os.RemoveAll(dir)
	db, _ := sql.Open("sqlite", "file:"+filepath.Join(dir, "es.db")+"?_pragma=journal_mode(WAL)&_pragma=busy_timeout(10000)&_txlock=immediate")
	defer db.Close()

	loaded, _ := plugin.InProcess(ctx, sqlite.New())
	e, err := engine.Open(ctx, db, loaded.Catalogue, engine.Config{Names: schema.Config{Aggregates: []schema.Aggregate{
		{Namespace: "bank", Name: "Account"},
		{Namespace: "bank", Name: "BankAccount", OwnTable: true},
	}}})
	if err != nil {
		fmt.Println(err)
		return
	}
	adv := hwm.New(e, hwm.Options{})
	store := eventstore.New(e, adv)
	for _, s := range []eventstore.Stream{
		{AggregateType: "bank.Account", AggregateID: "acc-1", Expected: eventstore.NoStream,
			Events: []eventstore.Event{{Type: "Opened", Payload: []byte(`{"owner":"Ada"}`)}}},
		{AggregateType: "bank.BankAccount", AggregateID: "BA-7", Expected: eventstore.NoStream,
			Events: []eventstore.Event{{Type: "Opened", Payload: []byte(`{"iban":"DE89"}`)}}},
		{AggregateType: "bank.Account", AggregateID: "acc-1", Expected: eventstore.Exactly(0),
			Events: []eventstore.Event{{Type: "Deposited", Payload: []byte(`{"amount":10}`)}}},
	} {
		if _, err := store.Append(ctx, s); err != nil {
			fmt.Println(err)
			return
		}
	}
	_, err = store.Append(ctx, eventstore.Stream{AggregateType: "bank.Account", AggregateID: "acc-1", Expected: eventstore.Exactly(0),
		Events: []eventstore.Event{{Type: "Deposited", Payload: []byte(`{"amount":99}`)}}})
	fmt.Println(err)

	for moved := true; moved; {
		moved, _ = adv.Cycle(ctx)
	}
	mark, _ := store.Mark(ctx)
	fmt.Println("mark", mark)
	events, _ := store.ReadAll(ctx, 0, 100)
	for _, r := range events {
		fmt.Println(r.GlobalPosition, r.AggregateType, r.AggregateID, r.SequenceNo, r.Type, string(r.Payload))
	}
	// Output:
	// append to bank.Account "acc-1" expected version 0 but the stream is at version 1
	// mark 3
	// 1 bank.Account acc-1 0 Opened {"owner":"Ada"}
	// 2 bank.BankAccount BA-7 0 Opened {"iban":"DE89"}
	// 3 bank.Account acc-1 1 Deposited {"amount":10}
}
