package conformance

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/eventstore"
	"github.com/tidemarkdb/tidemark/core/sqlerr"
	"github.com/tidemarkdb/tidemark/internal/testtime"
)

// testErrStoreClassified checks that the event store's own paths (the
// prepared event insert, the version read, the page reads) return classified
// errors like the engine's entry points: a caller branches on
// errors.Is(err, sqlerr.ErrUndefinedTable) whichever path failed, and a
// duplicate event id is both eventstore.ErrDuplicateEvent and
// sqlerr.ErrDuplicateEvent with the driver's error still reachable. Once the
// table is back, the same store works again.
func testErrStoreClassified(t T, env *Env) {
	store, e := openStore(t, env)
	ctx, cancel := testtime.Context(context.Background(), errGuard)
	defer cancel()
	if !hasRule(env.Catalogue, dialect.ErrUndefinedTable) {
		skipf(t, "dialect %s declares no undefined_table rule", env.Catalogue.Identity.Name)
	}
	id := newID(t)
	ev := func() eventstore.Event { return eventstore.Event{ID: id, Type: "Opened", Payload: []byte(`{}`)} }
	if _, err := store.Append(ctx, eventstore.Stream{AggregateType: "bank.Account", AggregateID: "cls-1",
		Expected: eventstore.NoStream, Events: []eventstore.Event{ev()}}); err != nil {
		t.Fatalf("first append: %v", err)
	}
	_, err := store.Append(ctx, eventstore.Stream{AggregateType: "bank.Account", AggregateID: "cls-2",
		Expected: eventstore.Any, Events: []eventstore.Event{ev()}})
	if !errors.Is(err, eventstore.ErrDuplicateEvent) || !errors.Is(err, sqlerr.ErrDuplicateEvent) {
		t.Errorf("duplicate event id: want eventstore.ErrDuplicateEvent and sqlerr.ErrDuplicateEvent, got %T: %v", err, err)
	}
	var se *sqlerr.Error
	if !errors.As(err, &se) || se.Err == nil {
		t.Errorf("duplicate event id: the database's error is not reachable: %T: %v", err, err)
	}

	// Drop the shared event table behind the store's back: every path that
	// reads or writes it now fails in the database.
	table := e.Names.Shared["event_store_table"]
	if err := dropTable(ctx, env, table); err != nil {
		// Firebird refuses to drop a table that any attachment has a
		// statement prepared on ("object TABLE … is in use", GDS
		// 335544453): the store's own prepared statements hold it. The
		// engine releases them (Close keeps it usable: it prepares again
		// on next use), and the paths below then fail when they prepare
		// afresh on the missing table, which must be classified the same.
		t.Logf("dropping %s with the store's statements prepared: %v; releasing them and dropping again", table, err)
		e.Close()
		if err := dropTable(ctx, env, table); err != nil {
			t.Fatalf("dropping %s: %v", table, err)
		}
	}
	paths := []struct {
		name string
		run  func() error
	}{
		{"Append (Any)", func() error {
			_, err := store.Append(ctx, eventstore.Stream{AggregateType: "bank.Account", AggregateID: "cls-3",
				Expected: eventstore.Any, Events: []eventstore.Event{{Type: "Opened", Payload: []byte(`{}`)}}})
			return err
		}},
		{"Append (two streams)", func() error {
			_, err := store.Append(ctx,
				eventstore.Stream{AggregateType: "bank.Account", AggregateID: "cls-4", Expected: eventstore.NoStream,
					Events: []eventstore.Event{{Type: "Opened", Payload: []byte(`{}`)}}},
				eventstore.Stream{AggregateType: "bank.Account", AggregateID: "cls-5", Expected: eventstore.NoStream,
					Events: []eventstore.Event{{Type: "Opened", Payload: []byte(`{}`)}}})
			return err
		}},
		{"Load", func() error { _, err := store.Load(ctx, "bank.Account", "cls-1", -1); return err }},
		{"ReadUpTo", func() error { _, err := store.ReadUpTo(ctx, 0, 10, 10); return err }},
	}
	for _, p := range paths {
		err := p.run()
		if !errors.Is(err, sqlerr.ErrUndefinedTable) {
			t.Errorf("%s on a dropped table: errors.Is(err, sqlerr.ErrUndefinedTable) is false; read %+v from %T: %v",
				p.name, sqlerr.Extract(err), err, err)
			continue
		}
		if sqlerr.IsTransient(err) {
			t.Errorf("%s: a missing table is not transient", p.name)
		}
		t.Logf("%s: %v", p.name, fmt.Sprint(err))
	}

	// Recreate the table (a second start creates what is missing): the
	// same store works again, its statements prepared before the drop
	// included (HSQLDB invalidates them; the engine re-prepares).
	openEngine(t, env, defaultConfig(env))
	for _, id := range []string{"cls-1", "cls-6"} {
		if _, err := store.Append(ctx, eventstore.Stream{AggregateType: "bank.Account", AggregateID: id,
			Expected: eventstore.NoStream, Events: []eventstore.Event{{Type: "Opened", Payload: []byte(`{}`)}}}); err != nil {
			t.Fatalf("append %s after the table was recreated: %v", id, err)
		}
	}
	if evs, err := store.Load(ctx, "bank.Account", "cls-1", -1); err != nil || len(evs) != 1 {
		t.Fatalf("load after the table was recreated: %d events, %v", len(evs), err)
	}
}

// dropTable drops table in a transaction of its own connection. A drop the
// engine refuses at commit (Firebird checks DDL then) leaves that
// connection's transaction in an unknown state: the connection is
// discarded instead of going back to the pool.
func dropTable(ctx context.Context, env *Env, table string) error {
	conn, err := env.DB.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	tx, err := conn.BeginTx(ctx, nil)
	if err == nil {
		if _, err = tx.ExecContext(ctx, "DROP TABLE "+table); err != nil {
			_ = tx.Rollback()
		} else {
			err = tx.Commit()
		}
	}
	if err != nil {
		_ = conn.Raw(func(any) error { return driver.ErrBadConn })
	}
	return err
}
