package conformance

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/eventstore"
	"github.com/tidemarkdb/tidemark/internal/testtime"
)

func positionTests() []Test {
	return []Test{
		{"positions/xid_before_nextval", testXIDBeforeNextval},
		{"positions/committed_end_never_ahead_of_draws", testCommittedEndNeverAhead},
		{"positions/capture_end_never_ahead_of_draws", testCaptureEndNeverAhead},
	}
}

// testXIDBeforeNextval proves that an append on SEQUENCE_XID_HORIZON takes
// its transaction id before it draws a position from the sequence: the
// high-water mark's horizon (a transaction id taken after reading the
// sequence) covers every position drawn before it only if so.
//
// The proof is on the engine, not a timing: a session holds a lock on the
// sequence that nextval waits for (ALTER SEQUENCE takes SHARE ROW
// EXCLUSIVE, nextval needs ROW EXCLUSIVE), an append then blocks inside
// nextval, and the blocked backend must already have a transaction id
// (its transactionid lock), which is the xmin of the rows it stores once
// the lock is released. An append that drew the position first would
// wait with no transaction id (a plain INSERT gets one only when it writes
// its first row). The wait and the id come from one snapshot of pg_locks
// (the id is the transactionid lock the backend holds), so the answer is
// the same whatever the timing. It runs for the one-statement append and for one in a
// transaction (two streams). The strategy is PostgreSQL's (pg_locks,
// pg_stat_activity); counter dialects skip.
func testXIDBeforeNextval(t T, env *Env) {
	if env.Features.CounterPositions {
		skipf(t, "positions come from a counter row (%s): there is no sequence to draw before the transaction id", env.Catalogue.Positions)
	}
	s, e := openStore(t, env)
	seq := e.Names.Shared["event_store_global_position_table"]
	ph := e.Cat.Identity.Placeholder
	for _, c := range []struct {
		name    string
		streams []eventstore.Stream
	}{
		{"one-statement append", []eventstore.Stream{{AggregateType: "bank.Account", AggregateID: "xid-1", Events: []eventstore.Event{ev("t.E", `{}`)}}}},
		{"append in a transaction", []eventstore.Stream{
			{AggregateType: "bank.Account", AggregateID: "xid-2", Events: []eventstore.Event{ev("t.E", `{}`)}},
			{AggregateType: "bank.Account", AggregateID: "xid-3", Events: []eventstore.Event{ev("t.E", `{}`)}},
		}},
	} {
		ctx, cancel := testtime.Context(context.Background(), time.Minute)
		xid := blockedAppendXID(t, ctx, env, s, seq, ph, c.streams)
		cancel()
		id := c.streams[0].AggregateID
		var xmin string
		q := dialect.Compile("SELECT xmin::text FROM "+e.Names.ByAggregate["bank.Account"].Events+" WHERE aggregate_id = #{id}", ph)
		args, _ := q.Args(map[string]any{"id": id})
		if err := e.DB.QueryRowContext(context.Background(), q.SQL, args...).Scan(&xmin); err != nil {
			t.Fatalf("%s: reading the stored row's xmin: %v", c.name, err)
		}
		if xmin != xid {
			t.Errorf("%s: the blocked backend had transaction id %s, the stored row's xmin is %s", c.name, xid, xmin)
		}
		t.Logf("%s: waiting inside nextval with transaction id %s already assigned (the row's xmin)", c.name, xid)
	}
}

// blockedAppendXID holds the sequence, starts the append, waits (bounded)
// until its backend waits for the sequence's lock, reads that backend's
// transaction id, releases the lock and waits for the append to finish.
func blockedAppendXID(t T, ctx context.Context, env *Env, s *eventstore.Store, seq string, ph dialect.PlaceholderStyle, streams []eventstore.Stream) string {
	t.Helper()
	holder, err := env.DB.BeginTx(ctx, nil)
	if err != nil {
		t.Fatalf("%v", err)
	}
	defer holder.Rollback()
	if _, err := holder.ExecContext(ctx, "ALTER SEQUENCE "+seq+" CACHE 1"); err != nil {
		t.Fatalf("locking the sequence: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := s.Append(ctx, streams...)
		done <- err
	}()
	// The wait and the transaction id are read from one snapshot of the
	// lock table: a waiting backend's xid is the transactionid lock it
	// holds from the moment it is assigned. (Reading the xid from
	// pg_stat_activity, a second snapshot taken before or after pg_locks
	// as the plan falls, showed a waiting append with no xid at random.)
	// pg_locks covers every database and relation OIDs are per database
	// (copies of one template share them): only this database's waits
	// count. Only a backend whose statement draws from the sequence
	// counts: other reads of the sequence wait behind the ALTER too, with
	// no transaction id; the statement's text is set before it waits, so
	// a pg_stat_activity read older than the wait only drops the row
	// until the next read.
	waiting := dialect.Compile(`WITH l AS MATERIALIZED (SELECT * FROM pg_locks)
SELECT w.pid, x.transactionid::text FROM l w
LEFT JOIN l x ON x.pid = w.pid AND x.locktype = 'transactionid' AND x.granted
JOIN pg_stat_activity a ON a.pid = w.pid
WHERE w.relation = #{seq}::regclass AND NOT w.granted AND a.query ILIKE '%nextval%'
AND w.database = (SELECT oid FROM pg_database WHERE datname = current_database())`, ph)
	args, _ := waiting.Args(map[string]any{"seq": foldName(&env.Catalogue, seq)})
	for {
		var pid int64
		var xid sql.NullString
		err := env.DB.QueryRowContext(ctx, waiting.SQL, args...).Scan(&pid, &xid)
		if err == nil {
			if !xid.Valid {
				_ = holder.Rollback()
				<-done
				t.Fatalf("the append (backend %d) waits for the sequence with no transaction id: it draws the position before taking its transaction id", pid)
			}
			_ = holder.Rollback()
			if err := <-done; err != nil {
				t.Fatalf("append after the lock was released: %v", err)
			}
			return xid.String
		}
		if err != sql.ErrNoRows {
			t.Fatalf("reading pg_locks: %v", err)
		}
		select {
		case err := <-done:
			t.Fatalf("the append finished without waiting for the sequence (%v): it does not draw from %s", err, seq)
		case <-ctx.Done():
			t.Fatalf("the append never waited for the sequence's lock: %v", fmt.Errorf("%w", ctx.Err()))
		case <-time.After(10 * time.Millisecond):
		}
	}
}
