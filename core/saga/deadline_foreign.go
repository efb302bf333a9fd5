package saga

import (
	"context"
	"time"
)

// DefaultForeignCheck is how often Run looks for overdue deadlines of saga
// types none of its targets delivers.
const DefaultForeignCheck = time.Minute

// WithForeignCheck sets how often Run, while it holds the lease, looks for
// overdue deadlines of saga types none of its targets delivers (default
// DefaultForeignCheck; 0 or less: never).
func WithForeignCheck(every time.Duration) DeadlineOption {
	return func(o *deadlineOptions) { o.foreignEvery = every }
}

// checkForeign warns of overdue deadlines of saga types this deliverer
// does not deliver. One process polls at a time and delivers its own types
// only, so such deadlines (another service's sagas in the same tables, a
// type not deployed here yet) wait until a holder that knows their type
// polls: said, not hidden. It runs while this process holds the lease.
func (d *Deadlines) checkForeign(ctx context.Context) {
	if d.opts.foreignEvery <= 0 {
		return
	}
	d.mu.Lock()
	if !d.foreignAt.IsZero() && time.Since(d.foreignAt) < d.opts.foreignEvery {
		d.mu.Unlock()
		return
	}
	held, err := d.held(ctx, false)
	if !held || err != nil {
		d.mu.Unlock()
		return
	}
	d.foreignAt = time.Now()
	d.mu.Unlock()
	st, err := ReadStatus(ctx, d.e)
	if err != nil {
		if ctx.Err() == nil {
			d.opts.logger.Warn("saga deadlines: reading the saga status failed", "owner", d.opts.owner, "err", err)
		}
		return
	}
	for _, ts := range st.Types {
		if _, ok := d.targets[ts.SagaType]; !ok && ts.Overdue > 0 {
			d.opts.logger.Warn("saga deadlines: overdue deadlines of a saga type this deliverer does not deliver; they wait for a lock holder that knows the type",
				"owner", d.opts.owner, "saga_type", ts.SagaType, "table", ts.Table, "overdue", ts.Overdue)
		}
	}
}
