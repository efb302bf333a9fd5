package saga

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/lease"
	"github.com/tidemarkdb/tidemark/core/stmt"
)

// lockLease is the SAGA_DEADLINE_LOCKS row DeliveryLock as a Lease: held
// by one owner until its expiry on the database clock; an owner renews it
// by taking it again, another takes it over once it has expired: the rule
// of every lease row (lease.Row, the high-water mark's lease too), on the
// spec's own table.
type lockLease struct {
	e     *engine.Engine
	owner string
	dur   time.Duration
}

// row is the lock row under the rule every lease row follows (lease.Row).
func (l *lockLease) row() lease.Row {
	p := stmt.SagaLockAcquireParams{LockName: DeliveryLock, Owner: l.owner, LeaseMillis: l.dur.Milliseconds()}
	return lease.Row{E: l.e,
		Take: func(ctx context.Context) (sql.Result, error) { return stmt.ExecSagaLockAcquire(ctx, l.e, l.e.DB, p) },
		Seed: func(ctx context.Context) error {
			_, err := stmt.ExecSagaLockInsert(ctx, l.e, l.e.DB, stmt.SagaLockInsertParams(p))
			return err
		},
		Drop: func(ctx context.Context) error {
			_, err := stmt.ExecSagaLockRelease(ctx, l.e, l.e.DB, stmt.SagaLockReleaseParams{LockName: DeliveryLock, Owner: l.owner})
			return err
		}}
}

// Held takes or renews the lock: held when the row is this owner's, free
// or expired (by the database clock), or missing and seeded by this owner.
func (l *lockLease) Held(ctx context.Context) (bool, error) {
	held, err := l.row().Held(ctx)
	if err != nil {
		return false, fmt.Errorf("saga deadline lock: %w", err)
	}
	return held, nil
}
