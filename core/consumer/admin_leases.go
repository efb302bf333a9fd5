package consumer

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/stmt"
)

// InstanceState is how an instance holding a consumer's leases stands, on
// the database clock.
type InstanceState string

// The states of an instance in the operator view.
const (
	// InstanceLive: its PARTITION_INSTANCES row has not expired; its leases
	// hold.
	InstanceLive InstanceState = "live"
	// InstanceLapsed: its row expired (a crashed or paused process); the
	// next rebalance of a live instance purges it and takes its partitions.
	InstanceLapsed InstanceState = "lapsed"
	// InstanceGone: no row at all (already purged or stopped) while an
	// ownership or membership row still names it.
	InstanceGone InstanceState = "gone"
)

// LeaseView is who holds a consumer's partition leases (core/lease): the
// operator view of PARTITION_INSTANCES, PARTITION_MEMBERS and
// PARTITION_OWNERSHIP.
type LeaseView struct {
	// Leased is false when the consumer has no membership and no ownership
	// row: it runs without partition leases (or has never run).
	Leased bool `json:"leased"`
	// Instances are the instances that are members of the consumer or own
	// one of its partitions, by id.
	Instances []LeaseInstance `json:"instances"`
	// Free are the partitions whose lease nobody holds (released on stop or
	// handed back), with the generation the next claim raises.
	Free []LeasedPartition `json:"free"`
}

// LeaseInstance is one instance in the operator view.
type LeaseInstance struct {
	ID    string        `json:"instance_id"`
	Host  string        `json:"host_name,omitempty"`
	State InstanceState `json:"state"`
	// Member says the instance has a membership row: it runs the consumer
	// and takes part in the distribution.
	Member bool `json:"member"`
	// StartedAt, LastHeartbeat and ExpiresAt are the database clock's
	// times of its row (UTC); nil when the instance is gone.
	StartedAt     *time.Time `json:"started_at"`
	LastHeartbeat *time.Time `json:"last_heartbeat"`
	ExpiresAt     *time.Time `json:"expires_at"`
	// Partitions are the leases it holds, by partition.
	Partitions []LeasedPartition `json:"partitions"`
}

// LeasedPartition is one lease: a partition and its generation (the
// fencing token of its current or last claim).
type LeasedPartition struct {
	Partition  int   `json:"partition"`
	Generation int64 `json:"generation"`
}

// collect reads every row of a typed query.
func collect[R any](rows stmt.Rows[R], err error) ([]R, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []R
	for rows.Next() {
		r, err := rows.Row()
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// leases reads the lease view of ref: three reads outside a
// transaction, so a rebalance in between may show a partition moved while
// its new owner's row is not yet listed (the owner then shows as gone).
func (o *Operator) leases(ctx context.Context, ref Ref) (LeaseView, error) {
	v := LeaseView{Instances: []LeaseInstance{}, Free: []LeasedPartition{}}
	e, p := o.r.e, stmt.LeaseStatusOwnershipParams{ConsumerType: ref.Type, ConsumerName: ref.Name}
	owners, err := collect(stmt.QueryLeaseStatusOwnership(ctx, e, e.DB, p))
	if err != nil {
		return v, fmt.Errorf("consumer %s: lease ownership: %w", ref, err)
	}
	members, err := collect(stmt.QueryLeaseStatusMembers(ctx, e, e.DB, stmt.LeaseStatusMembersParams(p)))
	if err != nil {
		return v, fmt.Errorf("consumer %s: lease members: %w", ref, err)
	}
	rows, err := collect(stmt.QueryLeaseStatusInstances(ctx, e, e.DB, stmt.LeaseStatusInstancesParams(p)))
	if err != nil {
		return v, fmt.Errorf("consumer %s: lease instances: %w", ref, err)
	}
	v.Leased = len(owners) > 0 || len(members) > 0
	byID := map[string]*LeaseInstance{}
	instance := func(id string) *LeaseInstance {
		if in, ok := byID[id]; ok {
			return in
		}
		in := &LeaseInstance{ID: id, State: InstanceGone, Partitions: []LeasedPartition{}}
		byID[id] = in
		return in
	}
	for _, r := range rows {
		in := instance(r.InstanceID)
		in.Host, in.State = r.HostName.String, InstanceLapsed
		if r.IsLive == 1 {
			in.State = InstanceLive
		}
		in.StartedAt, in.LastHeartbeat, in.ExpiresAt = optTime(r.StartedAt), optTime(r.LastHeartbeat), optTime(r.ExpiresAt)
	}
	for _, m := range members {
		instance(m.InstanceID).Member = true
	}
	for _, r := range owners {
		p := LeasedPartition{Partition: r.PartitionNo, Generation: r.Generation}
		if !r.InstanceID.Valid {
			v.Free = append(v.Free, p)
			continue
		}
		in := instance(r.InstanceID.String)
		in.Partitions = append(in.Partitions, p)
	}
	for _, in := range byID {
		sort.Slice(in.Partitions, func(i, j int) bool { return in.Partitions[i].Partition < in.Partitions[j].Partition })
		v.Instances = append(v.Instances, *in)
	}
	sort.Slice(v.Instances, func(i, j int) bool { return v.Instances[i].ID < v.Instances[j].ID })
	sort.Slice(v.Free, func(i, j int) bool { return v.Free[i].Partition < v.Free[j].Partition })
	return v, nil
}

// optTime is t as a pointer, nil for the zero time (a NULL column).
func optTime(t engine.UTCTime) *time.Time {
	if time.Time(t).IsZero() {
		return nil
	}
	v := time.Time(t)
	return &v
}
