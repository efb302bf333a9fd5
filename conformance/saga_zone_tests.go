package conformance

import (
	"context"
	"time"

	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/saga"
	"github.com/tidemarkdb/tidemark/internal/testtime"
)

// testSagaSessionZone: a deadline scheduled in a transaction whose session
// is 5 h 45 min east of UTC (where the engine has session zones: a clock
// skewed by the session, not the machine) is due on the database clock
// like any other: scheduled a minute in the past, the deliverer on the
// engine's pool delivers it at once; the lock's expiry reads back as an
// instant within the lease of the database clock's now.
func testSagaSessionZone(t T, env *Env) {
	r := newSagaRig(t, env)
	ctx, cancel := testtime.Context(context.Background(), errGuard)
	defer cancel()
	conn, err := r.e.DB.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	zone := ""
	for _, s := range sessionTimeZones {
		if _, err := conn.ExecContext(ctx, s); err == nil {
			zone = s
			break
		}
	}
	if zone == "" {
		skipf(t, "%s has no session time zone to set", env.Catalogue.Identity.Name)
	}
	tx, err := conn.BeginTx(ctx, r.e.TxOptions(engine.OpWrite))
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if err := r.st.Apply(ctx, tx, sagaRecord(t, sagaOpened{ID: "z-1", ArmMs: -60_000})); err != nil {
		t.Fatalf("apply on the zoned session: %v", err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	d := r.deliverer(t)
	if n := r.poll(t, d); n != 1 {
		t.Errorf("a deadline due a minute ago, scheduled on a session with %s, delivered %d; want 1", zone, n)
	}
	st, err := saga.ReadStatus(ctx, r.e)
	if err != nil || st.Lock == nil {
		t.Fatalf("status: %+v, %v", st, err)
	}
	if off := st.Lock.ExpiresAt.Sub(r.dbNow(t)); off < -time.Minute || off > time.Hour {
		t.Errorf("the lock expires %v from the database clock's now; want within the lease", off)
	}
}
