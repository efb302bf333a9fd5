package lease

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/sqlerr"
)

// Row is the one rule of Tidemark's single-holder leases kept in a row —
// the high-water mark's lease on its mark row, the saga deadline lock:
// one owner holds the row until an expiry on the database clock; it
// renews by taking the row again before the expiry; anyone takes it over
// once the expiry has passed (the database's clock decides, so processes
// with skewed clocks agree); a release frees it at once. Take, Seed and
// Drop are the dialect's statements of that row; Row runs them the same
// way for every lease (SQLite's writer lock held, the affected-row count
// read, a lost race to seed the row answered as not held).
type Row struct {
	E *engine.Engine
	// Take sets the owner and an expiry of the database clock plus the
	// lease where the row is this owner's, free or expired; one row
	// affected means held.
	Take func(ctx context.Context) (sql.Result, error)
	// Seed, when set, inserts the row held by this owner where Take found
	// none (a lock table whose rows are made on first use); a unique
	// violation (another process seeded it first) is "not held".
	Seed func(ctx context.Context) error
	// Drop releases the row if this owner holds it.
	Drop func(ctx context.Context) error
}

// releaseTimeout bounds a release, which runs on a stopping path.
const releaseTimeout = 2 * time.Second

// Held takes or renews the lease and reports whether this owner holds it.
func (r Row) Held(ctx context.Context) (bool, error) {
	defer r.E.LockWriter()()
	res, err := r.Take(ctx)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	if err != nil || n == 1 || r.Seed == nil {
		return n == 1, err
	}
	if err := r.Seed(ctx); err != nil {
		if errors.Is(err, sqlerr.ErrUniqueViolation) {
			return false, nil
		}
		return false, err
	}
	return true, nil
}

// Release frees the row if this owner holds it, within a short bound of
// its own (a stopping process's context may already have ended).
func (r Row) Release() {
	defer r.E.LockWriter()()
	ctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
	defer cancel()
	_ = r.Drop(ctx)
}
