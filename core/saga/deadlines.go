package saga

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/lease"
	"github.com/tidemarkdb/tidemark/core/stmt"
)

// DeliveryLock is the SAGA_DEADLINE_LOCKS row the deadline poller holds.
const DeliveryLock = "saga-deadline-delivery"

// Deadline is a due deadline as a Target gets it.
type Deadline struct {
	ID, SagaType, SagaID, Name string
	// DueAt is when it fell due, on the database clock (UTC).
	DueAt time.Time
	// Payload is the scheduled payload as the codec wrote it (nil: none).
	Payload []byte
	// Metadata is its metadata_json: the metadata of the event whose
	// handler scheduled it, carried on by a deadline handler that
	// schedules another (nil: none).
	Metadata []byte
}

// Target delivers the deadlines of one saga type: a *Store.
type Target interface {
	SagaType() string
	// Engine is the engine the target runs its SQL on: it must be the
	// deliverer's, whose transaction DeliverDeadline runs in.
	Engine() *engine.Engine
	// DeliverDeadline runs the deadline's handler on its instance in tx
	// (the deadline's row is already deleted there).
	DeliverDeadline(ctx context.Context, tx *sql.Tx, d Deadline) error
}

// Lease says whether this process may poll for due deadlines now. Held
// is called before every poll and again during a long batch; a lease of
// the application's replaces the lock row (WithLease).
type Lease interface {
	Held(ctx context.Context) (bool, error)
}

// DeadlineOption sets an option of NewDeadlines.
type DeadlineOption func(*deadlineOptions)

type deadlineOptions struct {
	owner         string
	poll, leaseOf time.Duration
	batch         int
	lease         Lease
	logger        *slog.Logger
	purgeAge      time.Duration
	purgeEvery    time.Duration
	retryFirst    time.Duration
	retryMax      time.Duration
	foreignEvery  time.Duration
}

// WithLease polls while l is held, instead of holding the
// SAGA_DEADLINE_LOCKS row (which is then not used).
func WithLease(l Lease) DeadlineOption { return func(o *deadlineOptions) { o.lease = l } }

// WithOwner names this process in the lock row (default host, pid and a
// random suffix).
func WithOwner(owner string) DeadlineOption { return func(o *deadlineOptions) { o.owner = owner } }

// WithPollInterval sets how often the holder polls for due deadlines
// (default lease.DefaultHeartbeatInterval).
func WithPollInterval(d time.Duration) DeadlineOption { return func(o *deadlineOptions) { o.poll = d } }

// WithLeaseDuration sets how long the lock row stays held after a renewal,
// on the database clock (default lease.DefaultLeaseDuration); another
// process takes it over once it has expired.
func WithLeaseDuration(d time.Duration) DeadlineOption {
	return func(o *deadlineOptions) { o.leaseOf = d }
}

// WithBatch sets how many due deadlines one poll reads (default 100).
func WithBatch(n int) DeadlineOption { return func(o *deadlineOptions) { o.batch = n } }

// WithPurge makes Run purge, every interval while this process holds the
// lease, each target's completed instances older than olderThan on the
// database clock (Store.Purge: never one with a pending deadline), so one
// process of many purges. The process clock only paces the schedule.
func WithPurge(olderThan, every time.Duration) DeadlineOption {
	return func(o *deadlineOptions) { o.purgeAge, o.purgeEvery = olderThan, every }
}

// Purger is a Target that purges its completed instances (a *Store).
type Purger interface {
	Purge(ctx context.Context, olderThan time.Duration) (int64, error)
}

// WithLogger sets where delivery failures are logged (slog.Default()).
func WithLogger(l *slog.Logger) DeadlineOption { return func(o *deadlineOptions) { o.logger = l } }

// Deadlines is the deadline deliverer of one process: run one beside the
// consumer runner. Only the holder of the lease polls; each due deadline
// is delivered in one transaction that deletes its row (exactly one
// transaction can), runs the saga's deadline handler on the instance and
// saves it, so a committed delivery never repeats and a delivery that did
// not commit leaves the deadline due.
type Deadlines struct {
	e       *engine.Engine
	targets map[string]Target
	opts    deadlineOptions
	lock    *lockLease // nil with WithLease

	mu        sync.Mutex     // one poll (or purge) at a time
	renewed   time.Time      // when the lease was last confirmed (monotonic, this process)
	purged    time.Time      // when Run last purged (monotonic, this process)
	failures  map[string]int // failed deliveries in a row, by deadline id (this process)
	foreignAt time.Time      // when Run last looked for other types' overdue deadlines
}

// InvalidOptionError reports an option NewDeadlines refuses.
type InvalidOptionError struct{ Option, Reason string }

func (e *InvalidOptionError) Error() string {
	return fmt.Sprintf("saga deadlines: %s %s", e.Option, e.Reason)
}

// NewDeadlines makes the deliverer of targets' deadlines on e.
func NewDeadlines(e *engine.Engine, targets []Target, opts ...DeadlineOption) (*Deadlines, error) {
	o := deadlineOptions{poll: lease.DefaultHeartbeatInterval, leaseOf: lease.DefaultLeaseDuration, batch: 100, logger: slog.Default(),
		retryFirst: DefaultRetryFirst, retryMax: DefaultRetryMax, foreignEvery: DefaultForeignCheck}
	for _, f := range opts {
		f(&o)
	}
	if err := o.check(len(targets)); err != nil {
		return nil, err
	}
	if o.owner == "" {
		host, _ := os.Hostname()
		o.owner = fmt.Sprintf("%s-%d-%s", host, os.Getpid(), uuid.NewString()[:8])
	}
	d := &Deadlines{e: e, targets: map[string]Target{}, opts: o, failures: map[string]int{}}
	for _, t := range targets {
		if err := d.add(t); err != nil {
			return nil, err
		}
	}
	if o.lease == nil {
		d.lock = &lockLease{e: e, owner: o.owner, dur: o.leaseOf}
		d.opts.lease = d.lock
	}
	return d, nil
}

// check refuses options NewDeadlines cannot run with.
func (o *deadlineOptions) check(targets int) error {
	switch {
	case o.poll <= 0:
		return &InvalidOptionError{"poll interval", "must be positive"}
	case o.lease == nil && o.leaseOf <= o.poll:
		return &InvalidOptionError{"lease duration", fmt.Sprintf("must exceed the poll interval %s", o.poll)}
	case o.batch <= 0:
		return &InvalidOptionError{"batch", "must be positive"}
	case o.purgeAge < 0 || o.purgeEvery < 0:
		return &InvalidOptionError{"purge", "age and interval must not be negative"}
	case o.retryFirst <= 0 || o.retryMax < o.retryFirst:
		return &InvalidOptionError{"retry delay", fmt.Sprintf("must be positive, its maximum %s at least its first %s", o.retryMax, o.retryFirst)}
	case targets == 0:
		return &InvalidOptionError{"targets", "must name at least one saga"}
	}
	return nil
}

// add routes t's saga type to t: once, and only a target on the
// deliverer's engine (its SQL runs in the deliverer's transaction).
func (d *Deadlines) add(t Target) error {
	if t == nil {
		return &InvalidOptionError{"targets", "must not hold nil"}
	}
	if t.Engine() != d.e {
		return &InvalidOptionError{"targets", fmt.Sprintf("saga %q is bound to another engine than the deliverer's", t.SagaType())}
	}
	if _, dup := d.targets[t.SagaType()]; dup {
		return &InvalidOptionError{"targets", fmt.Sprintf("name saga %q twice", t.SagaType())}
	}
	d.targets[t.SagaType()] = t
	return nil
}

// Owner is the name this process holds the lock row under.
func (d *Deadlines) Owner() string { return d.opts.owner }

// Run polls until ctx ends (returning ctx's error); a failed poll is
// logged and tried again at the next interval. The lock row is released
// on the way out.
func (d *Deadlines) Run(ctx context.Context) error {
	defer d.release()
	for {
		if _, err := d.Poll(ctx); ctx.Err() == nil {
			if err = undelivered(err); err != nil { // Poll logged each failed delivery
				d.opts.logger.Warn("saga deadlines: poll failed", "owner", d.opts.owner, "err", err)
			}
		}
		d.purge(ctx)
		d.checkForeign(ctx)
		if err := engine.Sleep(ctx, d.opts.poll); err != nil {
			return err
		}
	}
}

// Poll runs one poll: when the lease is held, it reads up to a batch of
// due deadlines (due on the database clock) and delivers each; it returns
// how many it delivered; polls of one Deadlines run one at a time. A
// delivery that fails is rolled back, logged at warn and joined into the
// error as a *DeliveryError; when its error is not transient, the
// deadline is then tried again later (see WithRetryDelay), so a failing
// deadline never holds back the others.
func (d *Deadlines) Poll(ctx context.Context) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if held, err := d.held(ctx, true); !held || err != nil {
		return 0, err
	}
	due, err := d.due(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	var errs []error
	for _, dl := range due {
		if held, err := d.held(ctx, false); !held || err != nil {
			return n, errors.Join(append(errs, err)...)
		}
		ok, err := d.deliver(ctx, dl)
		if err != nil {
			errs = append(errs, d.failed(ctx, dl, err))
			continue
		}
		delete(d.failures, dl.ID)
		if ok {
			n++
		}
	}
	return n, errors.Join(errs...)
}

// held asks the lease; during a batch (force false) only once a third of
// the lease has passed since the last confirmation.
func (d *Deadlines) held(ctx context.Context, force bool) (bool, error) {
	if !force && d.lock != nil && time.Since(d.renewed) < d.opts.leaseOf/3 {
		return true, nil
	}
	ok, err := d.opts.lease.Held(ctx)
	if ok && err == nil {
		d.renewed = time.Now()
	}
	return ok, err
}

// due reads up to a batch of due deadlines of this process's saga types,
// in due_at order: up to a batch of each type (the database filters the
// type and stops at the batch), merged.
func (d *Deadlines) due(ctx context.Context) ([]Deadline, error) {
	var out []Deadline
	for _, typ := range slices.Sorted(maps.Keys(d.targets)) {
		got, err := d.dueOf(ctx, typ)
		if err != nil {
			return nil, fmt.Errorf("saga deadlines: reading due deadlines of %q: %w", typ, err)
		}
		out = append(out, got...)
	}
	slices.SortStableFunc(out, func(a, b Deadline) int {
		if c := a.DueAt.Compare(b.DueAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out[:min(len(out), d.opts.batch)], nil
}

// dueOf reads up to a batch of due deadlines of sagaType, to the end of
// the result.
func (d *Deadlines) dueOf(ctx context.Context, sagaType string) ([]Deadline, error) {
	rows, err := stmt.QuerySagaDeadlinesDue(ctx, d.e, d.e.DB, stmt.SagaDeadlinesDueParams{SagaType: sagaType, Limit: d.opts.batch})
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Deadline
	for rows.Next() {
		r, err := rows.Row()
		if err != nil {
			return nil, err
		}
		dl := Deadline{ID: string(r.ID), SagaType: r.SagaType, SagaID: r.SagaID, Name: r.Name, DueAt: time.Time(r.DueAt)}
		if r.PayloadJson.Valid {
			dl.Payload = []byte(r.PayloadJson.String)
		}
		if r.MetadataJson.Valid {
			dl.Metadata = []byte(r.MetadataJson.String)
		}
		out = append(out, dl)
	}
	return out, rows.Err()
}

// deliver delivers one deadline in one transaction: delete its row (false
// when it is gone: cancelled, or delivered by another), run its handler,
// commit. A conflicting update of the instance runs the transaction again.
func (d *Deadlines) deliver(ctx context.Context, dl Deadline) (bool, error) {
	var took bool
	err := d.e.InTx(ctx, engine.OpWrite, engine.TransientRetry{}, func(tx *sql.Tx) error {
		res, err := stmt.ExecSagaDeadlineTake(ctx, d.e, tx, stmt.SagaDeadlineTakeParams{ID: dl.ID})
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return err
		}
		if took = n == 1; !took {
			return nil
		}
		return d.targets[dl.SagaType].DeliverDeadline(ctx, tx, dl)
	})
	if err != nil {
		return false, err
	}
	return took, nil
}

// purge runs WithPurge's purge when its interval has passed and the lease
// is held; failures are logged.
func (d *Deadlines) purge(ctx context.Context) {
	if d.opts.purgeEvery <= 0 {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.purged.IsZero() && time.Since(d.purged) < d.opts.purgeEvery {
		return
	}
	if held, err := d.held(ctx, false); !held || err != nil {
		return
	}
	d.purged = time.Now()
	for _, t := range d.targets {
		p, ok := t.(Purger)
		if !ok {
			continue
		}
		if n, err := p.Purge(ctx, d.opts.purgeAge); err != nil && ctx.Err() == nil {
			d.opts.logger.Warn("saga deadlines: purge failed", "saga_type", t.SagaType(), "err", err)
		} else if n > 0 {
			d.opts.logger.Info("saga deadlines: purged completed sagas", "saga_type", t.SagaType(), "purged", n)
		}
	}
}

func (d *Deadlines) release() {
	if d.lock != nil {
		d.lock.row().Release()
	}
}

// DeliverDeadline runs the handler of d's name on its instance in tx and
// saves it (Complete completes the saga). A deadline of an instance that
// is gone or completed, or of a name with no handler, is dropped.
func (st *Store[S]) DeliverDeadline(ctx context.Context, tx *sql.Tx, d Deadline) error {
	fn, ok := st.s.deadlines[d.Name]
	if !ok {
		return nil
	}
	sc := &scope{ctx: ctx, e: st.e, tx: tx, codec: st.s.codec, sagaType: st.s.typ, sagaID: d.SagaID, metadata: d.Metadata, known: st.knows}
	return st.run(sc, false, func(sc *scope, s *S) error { return fn(sc, d.Payload, st.s.codec, s) })
}
