package dialect

// Partition leases, on ${partition_instances_table} (one row per running
// instance, live while expires_at is not past on the DATABASE clock),
// ${partition_members_table} (consumer × instance) and
// ${partition_ownership_table} (consumer × partition: owner and generation).
// Every expiry is computed and compared on the database clock from
// #{lease_millis}: the application clocks of instances may differ by minutes.
// A lease has no expiry of its own; it is live while its owner's instance
// row is.
const (
	// LeaseInstanceInsert inserts the row of #{instance_id} with
	// #{host_name}, started_at and last_heartbeat the database clock and
	// expires_at the clock plus #{lease_millis}. A unique violation means
	// the row exists (a lapsed row of this instance not yet purged).
	LeaseInstanceInsert StatementID = "lease.instance_insert"
	// LeaseHeartbeat sets last_heartbeat to the database clock and expires_at
	// to the clock plus #{lease_millis} for #{instance_id} only while its row
	// has not lapsed: ONE statement however many consumers and partitions the
	// instance holds. The core reads the affected row count: 0 means the
	// instance lapsed (or its row was purged) and lost every lease.
	LeaseHeartbeat StatementID = "lease.heartbeat"
	// LeaseInstanceDelete deletes the row of #{instance_id} (graceful stop,
	// or before re-registering after a lapse).
	LeaseInstanceDelete StatementID = "lease.instance_delete"
	// LeaseInstancesPurge deletes every instance row that has lapsed.
	LeaseInstancesPurge StatementID = "lease.instances_purge"
	// LeaseMemberInsert inserts the membership of #{instance_id} in
	// #{consumer_type}, #{consumer_name}. A unique violation means it exists.
	LeaseMemberInsert StatementID = "lease.member_insert"
	// LeaseMemberDelete deletes the membership of #{instance_id} in
	// #{consumer_type}, #{consumer_name}.
	LeaseMemberDelete StatementID = "lease.member_delete"
	// LeaseMembersOfInstance deletes every membership of #{instance_id}.
	LeaseMembersOfInstance StatementID = "lease.members_delete_instance"
	// LeaseMembersPurge deletes every membership whose instance row is
	// missing or lapsed.
	LeaseMembersPurge StatementID = "lease.members_purge"
	// LeaseLiveMembers returns (instance_id) of every member of
	// #{consumer_type}, #{consumer_name} whose instance row is live.
	LeaseLiveMembers StatementID = "lease.live_members"
	// LeaseOwnership returns (partition_no, instance_id, generation, live,
	// last_heartbeat) of every ownership row of #{consumer_type},
	// #{consumer_name}; live is 1 when instance_id names a live instance row
	// and 0 otherwise (free, missing or lapsed owner); last_heartbeat is the
	// owner's, NULL without a row.
	LeaseOwnership StatementID = "lease.ownership"
	// LeaseClaimInsert inserts the ownership row of #{consumer_type},
	// #{consumer_name}, #{partition_no} held by #{instance_id} at generation
	// 1 (the consumer's first claim of the partition). A unique violation
	// means another instance claimed it first.
	LeaseClaimInsert StatementID = "lease.claim_insert"
	// LeaseTakeover gives the lease of #{consumer_type}, #{consumer_name},
	// #{partition_no} to #{instance_id} and raises its generation by one,
	// only while its generation is still #{generation} (compare-and-set) and
	// it is free or its owner's instance row is missing or lapsed. The core
	// reads the affected row count (1 = taken). It waits for a fenced apply
	// holding the row (LeaseFence) to end.
	LeaseTakeover StatementID = "lease.takeover"
	// LeaseHandBack frees the lease of #{consumer_type}, #{consumer_name},
	// #{partition_no} while #{instance_id} holds it at #{generation}
	// (rebalance); the generation stays, the next claim raises it.
	LeaseHandBack StatementID = "lease.hand_back"
	// LeaseReleaseInstance frees every lease #{instance_id} holds (graceful
	// stop).
	LeaseReleaseInstance StatementID = "lease.release_instance"
	// LeaseReleaseConsumer frees every lease #{instance_id} holds of
	// #{consumer_type}, #{consumer_name} (the instance leaves the consumer).
	LeaseReleaseConsumer StatementID = "lease.release_consumer"
	// LeaseDeleteConsumer deletes every ownership row of #{consumer_type},
	// #{consumer_name} (unsubscribed everywhere).
	LeaseDeleteConsumer StatementID = "lease.delete_consumer"
	// LeaseDeleteConsumerMembers deletes every membership of
	// #{consumer_type}, #{consumer_name} (unsubscribed everywhere).
	LeaseDeleteConsumerMembers StatementID = "lease.delete_consumer_members"
	// LeaseFenceLock, optional, takes the write lock of the ownership row
	// of #{consumer_type}, #{consumer_name}, #{partition_no} in the caller's
	// transaction, for engines whose SELECT cannot lock a row so that a
	// writer waits (HSQLDB in MVCC mode: an UPDATE that changes nothing).
	// Run just before LeaseFence.
	LeaseFenceLock StatementID = "lease.fence_lock"
	// LeaseFence returns (instance_id, generation) of the ownership row of
	// #{consumer_type}, #{consumer_name}, #{partition_no} and keeps it locked
	// until the caller's transaction ends (the dialect's lock form: FOR
	// UPDATE, WITH (UPDLOCK, ROWLOCK), the serialised writer of SQLite, or
	// LeaseFenceLock before it), so a takeover (LeaseTakeover) waits for the
	// apply to commit. The core compares both with what it claimed.
	LeaseFence StatementID = "lease.fence"
)

var leaseOwnershipKey = []string{"consumer_type", "consumer_name", "partition_no"}

var (
	instancesTable = []string{"partition_instances_table"}
	membersTables  = []string{"partition_members_table", "partition_instances_table"}
	ownershipTable = []string{"partition_ownership_table"}
	ownershipLive  = []string{"partition_ownership_table", "partition_instances_table"}
)

var leaseStatements = []StatementSpec{
	{ID: LeaseInstanceInsert, Binds: []string{"instance_id", "host_name", "lease_millis"}, Tables: instancesTable},
	{ID: LeaseHeartbeat, Binds: []string{"instance_id", "lease_millis"}, Tables: instancesTable},
	{ID: LeaseInstanceDelete, Binds: []string{"instance_id"}, Tables: instancesTable},
	{ID: LeaseInstancesPurge, Tables: instancesTable},
	{ID: LeaseMemberInsert, Binds: []string{"consumer_type", "consumer_name", "instance_id"}, Tables: membersTables},
	{ID: LeaseMemberDelete, Binds: []string{"consumer_type", "consumer_name", "instance_id"}, Tables: membersTables},
	{ID: LeaseMembersOfInstance, Binds: []string{"instance_id"}, Tables: membersTables},
	{ID: LeaseMembersPurge, Tables: membersTables},
	{ID: LeaseLiveMembers, Binds: []string{"consumer_type", "consumer_name"}, Tables: membersTables, Returns: []string{"instance_id"}},
	{ID: LeaseOwnership, Binds: []string{"consumer_type", "consumer_name"}, Tables: ownershipLive,
		Returns: []string{"partition_no", "instance_id", "generation", "live", "last_heartbeat"}},
	{ID: LeaseClaimInsert, Binds: append(leaseOwnershipKey, "instance_id"), Tables: ownershipTable},
	{ID: LeaseTakeover, Binds: append(leaseOwnershipKey, "instance_id", "generation"), Tables: ownershipLive},
	{ID: LeaseHandBack, Binds: append(leaseOwnershipKey, "instance_id", "generation"), Tables: ownershipTable},
	{ID: LeaseReleaseInstance, Binds: []string{"instance_id"}, Tables: ownershipTable},
	{ID: LeaseReleaseConsumer, Binds: []string{"consumer_type", "consumer_name", "instance_id"}, Tables: ownershipTable},
	{ID: LeaseDeleteConsumer, Binds: []string{"consumer_type", "consumer_name"}, Tables: ownershipTable},
	{ID: LeaseDeleteConsumerMembers, Binds: []string{"consumer_type", "consumer_name"}, Tables: membersTables},
	{ID: LeaseFenceLock, Optional: true, Binds: leaseOwnershipKey, Tables: ownershipTable},
	{ID: LeaseFence, Binds: leaseOwnershipKey, Tables: ownershipTable, Returns: []string{"instance_id", "generation"}},
}
