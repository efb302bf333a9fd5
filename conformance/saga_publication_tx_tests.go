package conformance

import (
	"context"
	"database/sql"
	"errors"
	"sync"
	"time"

	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/publication"
	"github.com/tidemarkdb/tidemark/core/sqlerr"
)

// testPublicationConcurrentPutAndDelete: a first Put whose transaction
// did not see another first Put of the same id (committed after its
// snapshot) meets it on the primary key: the error is a transient
// *ConflictError (it was the engine's bare unique violation; HSQLDB
// refuses the stale transaction with a serialization failure), and the
// transaction run again replaces the metadata. The same metadata Put twice
// is no error (MySQL/MariaDB's update counts it as no row changed). Two first Puts on their own
// transactions both succeed. MarkCompletedTx and Delete run in the
// caller's transaction: rolled back, nothing changed; committed, the row is
// completed or gone. A bad id is refused before any SQL.
func testPublicationConcurrentPutAndDelete(t T, env *Env) {
	e := openEngine(t, env, defaultConfig(env))
	ctx := context.Background()
	s := publication.New(e)
	const id = "0190a1b2-c3d4-7e5f-8a9b-0000000000c1"
	if l := env.Catalogue.Locks; l.SerializesWriters || l.ReadersWaitForWriters {
		t.Logf("%s runs one writer at a time or makes readers wait for writers: no stale first Put to race", env.Catalogue.Identity.Name)
	} else {
		stalePut(t, e, s, id)
		if row, ok, err := s.Get(ctx, id); err != nil || !ok || string(row.Metadata) != `{"n":2}` {
			t.Errorf("after the raced Puts: %s (found %v, %v), want the second's metadata", row.Metadata, ok, err)
		}
	}
	const other = "0190a1b2-c3d4-7e5f-8a9b-0000000000c2"
	// The same metadata twice: MySQL/MariaDB report 0 changed rows for the
	// second's update, which must not then insert (a duplicate key).
	for i := range 2 {
		if err := s.Put(ctx, nil, "0190a1b2-c3d4-7e5f-8a9b-0000000000c3", []byte(`{"n":3}`)); err != nil {
			t.Errorf("Put %d of the same metadata: %v", i+1, err)
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range errs {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = s.Put(ctx, nil, other, []byte(`{"n":1}`)) }()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Errorf("two first Puts on their own transactions: %v", err)
	}
	publicationInTx(t, e, s, other)
	var inv *publication.InvalidError
	if _, err := s.Delete(ctx, nil, ""); !errors.As(err, &inv) {
		t.Errorf("Delete with an empty id: %v, want *InvalidError", err)
	}
	if _, err := s.MarkCompletedTx(ctx, nil, other, time.Time{}); !errors.As(err, &inv) {
		t.Errorf("MarkCompletedTx without a date: %v, want *InvalidError", err)
	}
}

// stalePut commits a first Put of id after a repeatable-read transaction
// took its snapshot, then Puts id in that transaction: nil (the engine's
// update saw the committed row) or a transient error, after which
// the transaction run again stores {"n":2}.
func stalePut(t T, e *engine.Engine, s *publication.Store, id string) {
	t.Helper()
	ctx := context.Background()
	tx2, err := e.DB.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelRepeatableRead})
	if err != nil {
		t.Fatalf("begin: %v", err)
	}
	defer func() { _ = tx2.Rollback() }()
	var n int
	if err := tx2.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+e.Names.Shared["event_publication_metadata_table"]).Scan(&n); err != nil {
		t.Fatalf("fixing the snapshot: %v", err)
	}
	if err := s.Put(ctx, nil, id, []byte(`{"n":1}`)); err != nil {
		t.Fatalf("the first Put: %v", err)
	}
	err = s.Put(ctx, tx2, id, []byte(`{"n":2}`))
	if err == nil {
		if err := tx2.Commit(); err != nil {
			t.Fatalf("commit: %v", err)
		}
		return
	}
	// HSQLDB refuses the stale transaction itself (a serialization
	// failure): transient too.
	var ce *publication.ConflictError
	if !sqlerr.IsTransient(err) || errors.As(err, &ce) && ce.PublicationID != id {
		t.Fatalf("the stale first Put: %v, want nil or a transient error (a *publication.ConflictError where the engine reports the key)", err)
	}
	_ = tx2.Rollback()
	if err := e.InTx(ctx, engine.OpWrite, engine.TransientRetry{}, func(tx *sql.Tx) error {
		return s.Put(ctx, tx, id, []byte(`{"n":2}`))
	}); err != nil {
		t.Fatalf("the Put run again: %v", err)
	}
}

// publicationInTx: MarkCompletedTx and Delete in a caller's transaction
// change nothing when it rolls back, and take effect when it commits.
func publicationInTx(t T, e *engine.Engine, s *publication.Store, id string) {
	t.Helper()
	ctx := context.Background()
	at := time.Now()
	for _, commit := range []bool{false, true} {
		tx, err := e.DB.BeginTx(ctx, nil)
		if err != nil {
			t.Fatalf("begin: %v", err)
		}
		if ok, err := s.MarkCompletedTx(ctx, tx, id, at); !ok || err != nil {
			t.Fatalf("MarkCompletedTx = %v, %v", ok, err)
		}
		if commit {
			err = tx.Commit()
		} else {
			err = tx.Rollback()
		}
		if err != nil {
			t.Fatalf("end the transaction: %v", err)
		}
		row, _, err := s.Get(ctx, id)
		if err != nil || (row.CompletionDate != nil) != commit {
			t.Errorf("committed %v: completion date %v (%v)", commit, row.CompletionDate, err)
		}
	}
	for _, commit := range []bool{false, true} {
		err := e.InTx(ctx, engine.OpWrite, engine.TransientRetry{}, func(tx *sql.Tx) error {
			if ok, err := s.Delete(ctx, tx, id); !ok || err != nil {
				return errors.Join(errors.New("Delete found no row"), err)
			}
			if !commit {
				return errRollback
			}
			return nil
		})
		if err != nil && !errors.Is(err, errRollback) {
			t.Fatalf("Delete: %v", err)
		}
		if _, ok, err := s.Get(ctx, id); err != nil || ok == commit {
			t.Errorf("committed %v: row present %v (%v)", commit, ok, err)
		}
	}
	if ok, err := s.Delete(ctx, nil, id); ok || err != nil {
		t.Errorf("Delete of a deleted row = %v, %v; want false", ok, err)
	}
}

var errRollback = errors.New("roll back")
