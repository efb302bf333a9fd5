// Package lease spreads each consumer's partitions over the instances
// running it and fences a former owner, on the spec's PARTITION_INSTANCES,
// PARTITION_MEMBERS and PARTITION_OWNERSHIP tables.
//
// One Coordinator per running instance (process) keeps one instance row,
// refreshed by ONE statement per heartbeat however many consumers and
// partitions it holds; every expiry is computed and compared on the
// database clock. Each consumer the instance runs Joins the coordinator
// (a membership row); every rebalance purges lapsed instances and their
// memberships, computes the consumer's assignment (Assign: rendezvous
// hashing with a bounded load) over the live members, hands back what is no
// longer this instance's and claims what is (a free or lapsed lease, raising
// its generation). An apply that shares the checkpoint's transaction calls
// Fence (or Member.Fence) first: it checks the lease under the claimed
// generation and locks the ownership row, so an instance that lost the lease
// rolls back and a takeover waits for an in-flight apply.
package lease

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/stmt"
)

// Defaults of Options. A lease outlives three missed heartbeats (3 × 1 s),
// and a lapsed instance's partitions move within one rebalance (2 s) after.
const (
	DefaultHeartbeatInterval = time.Second
	DefaultRebalanceInterval = 2 * time.Second
	DefaultLeaseDuration     = 3 * DefaultHeartbeatInterval
	DefaultRevokeTimeout     = 30 * time.Second
)

// Options configure a Coordinator.
type Options struct {
	// InstanceID is this instance's id, random for every run by default;
	// never the host name, which a restarted instance keeps.
	InstanceID string
	// HostName is shown to operators; os.Hostname() by default.
	HostName string
	// HeartbeatInterval is how often the instance row is refreshed.
	HeartbeatInterval time.Duration
	// RebalanceInterval is how often leases are purged, handed back and
	// claimed.
	RebalanceInterval time.Duration
	// LeaseDuration is how long the instance row stays live after a
	// heartbeat, on the database clock; more than HeartbeatInterval.
	LeaseDuration time.Duration
	// RevokeTimeout bounds a cooperative handover (ConsumerOptions.OnRevoke):
	// past it a revoked partition is handed back although applies on it are
	// still running (their fence then rolls a Transactional apply back).
	// 30 s by default.
	RevokeTimeout time.Duration
	// Logger receives state changes; slog.Default() when nil.
	Logger *slog.Logger
	// Now is the application's clock (time.Now by default). Leases never
	// read it: it only measures, locally, the time since the last
	// successful heartbeat, after which Owned reports nothing.
	Now func() time.Time
}

func (o *Options) defaults() error {
	if o.InstanceID == "" {
		b := make([]byte, 16)
		if _, err := rand.Read(b); err != nil {
			return fmt.Errorf("lease: instance id: %w", err)
		}
		o.InstanceID = hex.EncodeToString(b)
	}
	if o.HostName == "" {
		o.HostName, _ = os.Hostname()
	}
	o.HeartbeatInterval = orDefault(o.HeartbeatInterval, DefaultHeartbeatInterval)
	o.RebalanceInterval = orDefault(o.RebalanceInterval, DefaultRebalanceInterval)
	o.LeaseDuration = orDefault(o.LeaseDuration, 3*o.HeartbeatInterval)
	o.RevokeTimeout = orDefault(o.RevokeTimeout, DefaultRevokeTimeout)
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if len(o.HostName) > maxNameLength {
		o.HostName = o.HostName[:maxNameLength]
	}
	switch {
	case len(o.InstanceID) > maxNameLength:
		return &InvalidError{Field: "instance id", Value: o.InstanceID, Reason: "longer than 255 bytes"}
	case o.HeartbeatInterval < 0 || o.RebalanceInterval < 0 || o.LeaseDuration < 0:
		return &InvalidError{Field: "interval", Value: o.LeaseDuration, Reason: "must not be negative"}
	case o.LeaseDuration <= o.HeartbeatInterval:
		return &InvalidError{Field: "lease duration", Value: o.LeaseDuration,
			Reason: fmt.Sprintf("must exceed the heartbeat interval %s, or the instance lapses between heartbeats", o.HeartbeatInterval)}
	}
	return nil
}

// orDefault is d, or def when d is zero.
func orDefault(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

// Coordinator is one instance's partition leases over every consumer it
// runs. Safe for concurrent use.
type Coordinator struct {
	e    *engine.Engine
	opts Options
	log  *slog.Logger

	mu         sync.Mutex
	registered bool // the instance row was written (and not deleted by Stop/Leave)
	stopped    bool
	lastBeat   time.Time // application clock of the last live heartbeat
	members    map[string]*Member
	heartbeats int64
}

// New returns a coordinator for the instance; it writes nothing until the
// first Join.
func New(e *engine.Engine, opts Options) (*Coordinator, error) {
	if err := opts.defaults(); err != nil {
		return nil, err
	}
	return &Coordinator{e: e, opts: opts, members: map[string]*Member{},
		log: opts.Logger.With("instance", opts.InstanceID)}, nil
}

// InstanceID is this instance's id, as in PARTITION_INSTANCES.
func (c *Coordinator) InstanceID() string { return c.opts.InstanceID }

// Heartbeats is how many heartbeats refreshed the instance row.
func (c *Coordinator) Heartbeats() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.heartbeats
}

// instance is the binds naming this instance's row.
func (c *Coordinator) instance() stmt.LeaseInstanceDeleteParams {
	return stmt.LeaseInstanceDeleteParams{InstanceID: c.opts.InstanceID}
}

// beat is the binds of the instance row's heartbeat.
func (c *Coordinator) beat() stmt.LeaseHeartbeatParams {
	return stmt.LeaseHeartbeatParams{InstanceID: c.opts.InstanceID, LeaseMillis: c.opts.LeaseDuration.Milliseconds()}
}

// register writes the instance row (deleting a lapsed one of this id
// first): before the instance's first membership or claim.
func (c *Coordinator) register(ctx context.Context) error {
	if _, err := stmt.ExecLeaseInstanceDelete(ctx, c.e, c.e.DB, c.instance()); err != nil {
		return fmt.Errorf("lease: registering instance: %w", err)
	}
	if _, err := stmt.ExecLeaseInstanceInsert(ctx, c.e, c.e.DB, stmt.LeaseInstanceInsertParams{InstanceID: c.opts.InstanceID,
		HostName: nullable(c.opts.HostName), LeaseMillis: c.opts.LeaseDuration.Milliseconds()}); err != nil {
		return fmt.Errorf("lease: registering instance: %w", err)
	}
	c.mu.Lock()
	c.registered, c.lastBeat = true, c.opts.Now()
	c.mu.Unlock()
	c.log.Info("lease: instance registered", "host", c.opts.HostName, "lease", c.opts.LeaseDuration)
	return nil
}

// nullable binds "" as NULL.
func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// Heartbeat refreshes the instance row: one statement, however many
// consumers and partitions the instance holds. When the row had lapsed (the
// process was paused, the database unreachable) every lease is dropped
// locally, and the row and the memberships are written again; the next
// rebalance claims anew.
func (c *Coordinator) Heartbeat(ctx context.Context) error {
	c.mu.Lock()
	registered := c.registered && !c.stopped
	c.mu.Unlock()
	if !registered {
		return nil
	}
	res, err := stmt.ExecLeaseHeartbeat(ctx, c.e, c.e.DB, c.beat())
	if err != nil {
		return fmt.Errorf("lease: heartbeat: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("lease: heartbeat: %w", err)
	}
	if n == 1 {
		c.mu.Lock()
		c.lastBeat = c.opts.Now()
		c.heartbeats++
		c.mu.Unlock()
		return nil
	}
	c.log.Warn("lease: instance row lapsed; dropping every lease and registering again")
	for _, m := range c.memberList() {
		m.set(map[int]int64{})
	}
	if err := c.register(ctx); err != nil {
		return err
	}
	for _, m := range c.memberList() {
		if err := m.insertMembership(ctx); err != nil {
			return err
		}
	}
	return nil
}

// fresh reports whether the last live heartbeat is younger than the lease
// duration, by the application's clock (an elapsed time: a clock that is
// minutes off but steady measures it right).
func (c *Coordinator) fresh() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.registered && !c.stopped && c.opts.Now().Sub(c.lastBeat) < c.opts.LeaseDuration
}

func (c *Coordinator) memberList() []*Member {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]*Member, 0, len(c.members))
	for _, m := range c.members {
		out = append(out, m)
	}
	return out
}

// Rebalance purges lapsed instances and their memberships, then hands back
// and claims the partitions of every consumer the instance runs.
func (c *Coordinator) Rebalance(ctx context.Context) error {
	c.mu.Lock()
	registered := c.registered && !c.stopped
	c.mu.Unlock()
	if !registered {
		return nil
	}
	for _, purge := range []struct {
		id  dialect.StatementID
		run func(context.Context, *engine.Engine, engine.Querier) (sql.Result, error)
	}{{dialect.LeaseMembersPurge, stmt.ExecLeaseMembersPurge}, {dialect.LeaseInstancesPurge, stmt.ExecLeaseInstancesPurge}} {
		id := purge.id
		res, err := purge.run(ctx, c.e, c.e.DB)
		if err != nil {
			return fmt.Errorf("lease: purging lapsed instances: %w", err)
		}
		if n, _ := res.RowsAffected(); n > 0 {
			c.log.Info("lease: purged lapsed rows", "statement", id, "rows", n)
		}
	}
	var first error
	for _, m := range c.memberList() {
		if err := m.rebalance(ctx); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Run heartbeats and rebalances at the configured intervals until ctx
// ends, then stops gracefully (Stop) and returns nil. Errors of a round
// are logged; the next round retries. The heartbeat has its own loop, so a
// rebalance waiting for a fenced apply never delays it.
func (c *Coordinator) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		c.loop(ctx, c.opts.HeartbeatInterval, c.Heartbeat, "heartbeat")
	}()
	c.loop(ctx, c.opts.RebalanceInterval, c.Rebalance, "rebalance")
	wg.Wait()
	stopCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return c.Stop(stopCtx)
}

func (c *Coordinator) loop(ctx context.Context, every time.Duration, fn func(context.Context) error, what string) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if err := fn(ctx); err != nil && ctx.Err() == nil {
			c.log.Warn("lease: "+what+" failed; retrying next interval", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Stop releases every lease of the instance, deletes its memberships and
// its instance row. The coordinator cannot be used afterwards.
func (c *Coordinator) Stop(ctx context.Context) error {
	c.mu.Lock()
	if c.stopped {
		c.mu.Unlock()
		return nil
	}
	c.stopped = true
	registered := c.registered
	c.registered = false
	c.mu.Unlock()
	for _, m := range c.memberList() {
		m.set(map[int]int64{})
	}
	if !registered {
		return nil
	}
	in := c.instance()
	_, err := stmt.ExecLeaseReleaseInstance(ctx, c.e, c.e.DB, stmt.LeaseReleaseInstanceParams(in))
	if err == nil {
		_, err = stmt.ExecLeaseMembersOfInstance(ctx, c.e, c.e.DB, stmt.LeaseMembersOfInstanceParams(in))
	}
	if err == nil {
		_, err = stmt.ExecLeaseInstanceDelete(ctx, c.e, c.e.DB, in)
	}
	if err != nil {
		return fmt.Errorf("lease: stopping: %w", err)
	}
	c.log.Info("lease: instance stopped; leases released")
	return nil
}
