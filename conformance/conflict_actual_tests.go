package conformance

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/eventstore"
	"github.com/tidemarkdb/tidemark/core/sqlerr"
	"github.com/tidemarkdb/tidemark/core/stmt"
	"github.com/tidemarkdb/tidemark/internal/testtime"
)

// testConflictActualRead checks that a refused append's ConcurrencyError
// reports a version the store read: the insert of a caller's transaction
// whose snapshot predates the winning append is refused by the engine, and
// the version read after it must either return the winner's version or say
// why it could not (ReadErr). The store's pool has one connection, held by
// the caller's transaction, so a read on another connection cannot run.
func testConflictActualRead(t T, env *Env) {
	if env.Catalogue.Locks.SerializesWriters {
		skipf(t, "%s serializes writers: a caller's transaction holds the database from BEGIN, so no append commits between its version read and its insert", env.Catalogue.Identity.Name)
	}
	if env.Catalogue.Locks.ReadersWaitForWriters {
		skipf(t, "%s declares that readers wait for writers (locks.readers_wait_for_writers): a caller's transaction that read the stream holds it against the winning append, so none commits between its read and its insert", env.Catalogue.Identity.Name)
	}
	ctx := context.Background()
	winner, _ := openStore(t, env)
	db := env.OpenDB()
	db.SetMaxOpenConns(2)
	t.Cleanup(func() { db.Close() })
	octx, ocancel := testtime.Context(ctx, 2*time.Minute)
	defer ocancel()
	e, err := engine.Open(octx, db, env.Catalogue, defaultConfig(env))
	if err != nil {
		t.Fatalf("engine.Open on a pool of two connections: %v", err)
	}
	t.Cleanup(func() { e.Close() })
	loser := eventstore.New(e, nil)
	// The engine prepares statements on its pool: one append in a caller's
	// transaction first prepares those the refused one runs.
	warm(t, db, loser)
	id := newID(t)
	tx, err := db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelRepeatableRead})
	if err != nil {
		t.Fatalf("begin: %v", err)
	}
	defer func() { _ = tx.Rollback() }()
	// Fix the transaction's snapshot where the engine takes one at the
	// first read: the stream is empty in it.
	rctx, rcancel := context.WithTimeout(ctx, time.Minute)
	defer rcancel()
	_, err = stmt.QueryRowStreamVersion(rctx, e, tx, stmt.StreamVersionParams{AggregateID: id, EventStoreTable: e.Names.Shared["event_store_table"]})
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		t.Fatalf("reading the empty stream in the caller's transaction: %v", err)
	}
	if _, err := winner.Append(ctx, eventstore.Stream{AggregateType: "bank.Account", AggregateID: id, Expected: eventstore.NoStream,
		Events: []eventstore.Event{ev("test.Opened", `{}`), ev("test.Deposited", `{}`)}}); err != nil {
		t.Fatalf("winning append: %v", err)
	}
	held, err := db.Conn(rctx)
	if err != nil {
		t.Fatalf("taking the pool's other connection: %v", err)
	}
	defer held.Close()
	// The deadline bounds a version read that waits for the pool's held
	// connection; the assertion does not depend on it.
	actx, acancel := context.WithTimeout(ctx, 5*time.Second)
	defer acancel()
	_, err = loser.AppendTx(actx, tx, eventstore.Stream{AggregateType: "bank.Account", AggregateID: id, Expected: eventstore.NoStream,
		Events: []eventstore.Event{ev("test.Opened", `{}`)}})
	if errors.Is(err, sqlerr.ErrSerializationFailure) {
		skipf(t, "%s refuses the caller's snapshot transaction at its first write (%v): no insert is refused for a version", env.Catalogue.Identity.Name, err)
	}
	ce := expectErr[*eventstore.ConcurrencyError](t, err, "append whose snapshot predates the winner's")
	if ce.ReadErr != nil {
		if ce.Actual != eventstore.UnknownVersion {
			t.Errorf("version read failed (%v) but the conflict reports version %d, want UnknownVersion", ce.ReadErr, ce.Actual)
		}
		t.Logf("the version read after the refusal failed, reported as such: %v", ce.ReadErr)
		return
	}
	if ce.Actual != 1 {
		t.Errorf("conflict reports version %d, the store holds version 1", ce.Actual)
	}
}

// warm appends one event in a transaction of db's own, committed.
func warm(t T, db *sql.DB, s *eventstore.Store) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatalf("begin: %v", err)
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := s.AppendTx(ctx, tx, eventstore.Stream{AggregateType: "bank.Account", AggregateID: newID(t), Expected: eventstore.NoStream,
		Events: []eventstore.Event{ev("test.Opened", `{}`)}}); err != nil {
		t.Fatalf("warming append: %v", err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatalf("warming commit: %v", err)
	}
}

// testConflictActualConcurrent has writers race on one stream with exact
// versions: every conflict's Actual is a version the stream reached, past
// the one the writer expected.
func testConflictActualConcurrent(t T, env *Env) {
	s, _ := openStore(t, env)
	ctx := context.Background()
	id := newID(t)
	const writers, rounds = 4, 12
	var mu sync.Mutex
	var actuals []int64
	var wg sync.WaitGroup
	errs := make(chan error, writers*rounds)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			last := int64(-1)
			for r := range rounds {
				exp := eventstore.NoStream
				if last >= 0 {
					exp = eventstore.Exactly(last)
				}
				_, err := s.Append(ctx, eventstore.Stream{AggregateType: "bank.Account", AggregateID: id, Expected: exp,
					Events: []eventstore.Event{ev("test.Deposited", fmt.Sprintf(`{"writer":%d,"round":%d}`, w, r))}})
				var ce *eventstore.ConcurrencyError
				switch {
				case err == nil:
					last++
				case errors.As(err, &ce):
					if ce.ReadErr != nil || ce.Actual <= last {
						errs <- fmt.Errorf("writer %d expected %v: conflict reports version %d (read error %v)", w, exp, ce.Actual, ce.ReadErr)
						return
					}
					mu.Lock()
					actuals = append(actuals, ce.Actual)
					mu.Unlock()
					last = ce.Actual
				default:
					errs <- fmt.Errorf("writer %d: %w", w, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("%v", err)
	}
	evs, err := s.Load(ctx, "bank.Account", id, -1)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	for _, a := range actuals {
		if a >= int64(len(evs)) {
			t.Errorf("a conflict reported version %d; the stream holds %d events", a, len(evs))
		}
	}
	t.Logf("%d conflicts, stream at version %d", len(actuals), len(evs)-1)
}
