package lease

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/stmt"
)

// Claim is a lease as an instance holds it: the partition of a consumer and
// the generation it was claimed under. The generation is also the fencing
// token of applies outside the database: a side effect tagged with it can
// be refused by its receiver once a higher generation has been seen.
type Claim struct {
	ConsumerType string
	ConsumerName string
	Partition    int
	InstanceID   string
	Generation   int64
}

func (c Claim) check() error {
	if err := checkConsumer(c.ConsumerType, c.ConsumerName); err != nil {
		return err
	}
	switch {
	case c.Partition < 0 || c.Partition > maxPartitionNo:
		return &InvalidError{Field: "partition", Value: c.Partition, Reason: "out of range 0..32767"}
	case c.InstanceID == "" || len(c.InstanceID) > maxNameLength:
		return &InvalidError{Field: "instance id", Value: fmt.Sprintf("%q", c.InstanceID), Reason: "must have 1 to 255 bytes"}
	case c.Generation < 1:
		return &InvalidError{Field: "generation", Value: c.Generation, Reason: "a claimed lease has generation 1 or more"}
	}
	return nil
}

func (c Claim) key() stmt.LeaseFenceParams {
	return stmt.LeaseFenceParams{ConsumerType: c.ConsumerType, ConsumerName: c.ConsumerName, PartitionNo: c.Partition}
}

// Fence runs in the apply's transaction tx, before the apply writes: it
// checks that the lease of c is still held by c.InstanceID under
// c.Generation and locks its ownership row until tx ends (the dialect's
// lock form), so an instance that lost the lease gets a *LostError
// (errors.Is ErrLeaseLost) and must roll back, and a takeover waits until
// an in-flight apply has committed or rolled back.
func Fence(ctx context.Context, e *engine.Engine, tx *sql.Tx, c Claim) error {
	if err := c.check(); err != nil {
		return err
	}
	if e.Has(dialect.LeaseFenceLock) {
		if _, err := stmt.ExecLeaseFenceLock(ctx, e, tx, stmt.LeaseFenceLockParams(c.key())); err != nil {
			return fmt.Errorf("lease fence lock: %w", err)
		}
	}
	row, err := stmt.QueryRowLeaseFence(ctx, e, tx, c.key())
	owner, gen := row.InstanceID, row.Generation
	if errors.Is(err, sql.ErrNoRows) {
		return &LostError{Claim: c}
	}
	if err != nil {
		return fmt.Errorf("lease fence: %w", err)
	}
	if owner.String != c.InstanceID || gen != c.Generation {
		return &LostError{Claim: c, Owner: owner.String, Generation: gen}
	}
	return nil
}

// PartitionLease is one row of the operator view of a consumer's leases.
type PartitionLease struct {
	Partition  int
	Owner      string // empty while the lease is free
	Generation int64
	// Live is true while the owner's instance row has not lapsed.
	Live bool
	// LastHeartbeat is the owner's last heartbeat (database clock, UTC);
	// zero without an instance row.
	LastHeartbeat time.Time
}

// Status returns the leases of a consumer, by partition: which instance owns
// which partition, under which generation, and its last heartbeat.
func Status(ctx context.Context, e *engine.Engine, consumerType, consumerName string) ([]PartitionLease, error) {
	if err := checkConsumer(consumerType, consumerName); err != nil {
		return nil, err
	}
	return readOwnership(ctx, e, e.DB, consumerType, consumerName)
}

func readOwnership(ctx context.Context, e *engine.Engine, q engine.Querier, typ, name string) ([]PartitionLease, error) {
	rows, err := stmt.QueryLeaseOwnership(ctx, e, q, stmt.LeaseOwnershipParams{ConsumerType: typ, ConsumerName: name})
	if err != nil {
		return nil, fmt.Errorf("reading leases of %s/%s: %w", typ, name, err)
	}
	defer rows.Close()
	var out []PartitionLease
	for rows.Next() {
		r, err := rows.Row()
		if err != nil {
			return nil, err
		}
		out = append(out, PartitionLease{Partition: r.PartitionNo, Owner: r.InstanceID.String, Generation: r.Generation,
			Live: r.Live == 1, LastHeartbeat: time.Time(r.LastHeartbeat)})
	}
	return out, rows.Err()
}

// DeleteConsumer removes every ownership and membership row of a consumer:
// what unsubscribing it from the last topic it has checkpoints on does when
// the application no longer runs it on any topic (the spec's
// PARTITION_OWNERSHIP). Run it in the unsubscribe's transaction (q) or on
// the engine's database.
func DeleteConsumer(ctx context.Context, e *engine.Engine, q engine.Querier, consumerType, consumerName string) error {
	if err := checkConsumer(consumerType, consumerName); err != nil {
		return err
	}
	p := stmt.LeaseDeleteConsumerParams{ConsumerType: consumerType, ConsumerName: consumerName}
	_, err := stmt.ExecLeaseDeleteConsumer(ctx, e, q, p)
	if err == nil {
		_, err = stmt.ExecLeaseDeleteConsumerMembers(ctx, e, q, stmt.LeaseDeleteConsumerMembersParams(p))
	}
	if err != nil {
		return fmt.Errorf("deleting the leases of %s/%s: %w", consumerType, consumerName, err)
	}
	return nil
}
