package saga

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/sqlerr"
	"github.com/tidemarkdb/tidemark/core/stmt"
)

// lockLease is the SAGA_DEADLINE_LOCKS row DeliveryLock as a Lease: held
// by one owner until its expiry on the database clock; an owner renews it
// by taking it again, another takes it over once it has expired. The same
// rule as the high-water mark's lease (hwm.acquire), on the spec's own
// table.
type lockLease struct {
	e     *engine.Engine
	owner string
	dur   time.Duration
}

// Held takes or renews the lock: an update when the row exists and is
// this owner's or expired, else an insert; a row another live owner holds
// (or inserted first) is not held.
func (l *lockLease) Held(ctx context.Context) (bool, error) {
	defer l.e.LockWriter()()
	p := stmt.SagaLockAcquireParams{LockName: DeliveryLock, Owner: l.owner, LeaseMillis: l.dur.Milliseconds()}
	res, err := stmt.ExecSagaLockAcquire(ctx, l.e, l.e.DB, p)
	if err != nil {
		return false, fmt.Errorf("saga deadline lock: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 1 {
		return n == 1, err
	}
	_, err = stmt.ExecSagaLockInsert(ctx, l.e, l.e.DB, stmt.SagaLockInsertParams(p))
	if errors.Is(err, sqlerr.ErrUniqueViolation) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("saga deadline lock: %w", err)
	}
	return true, nil
}

func (l *lockLease) release(ctx context.Context) {
	defer l.e.LockWriter()()
	_, _ = stmt.ExecSagaLockRelease(ctx, l.e, l.e.DB, stmt.SagaLockReleaseParams{LockName: DeliveryLock, Owner: l.owner})
}
