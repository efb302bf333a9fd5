package dialect

// The operator view of a consumer's partition leases (tidemark consumers
// status): plain reads of the three lease tables, off the hot path, with the
// liveness of each instance decided on the DATABASE clock as every lease
// comparison is. Kept apart from statements_lease.go, which the
// coordinator's statements own.
const (
	// LeaseStatusOwnership returns (partition_no, instance_id, generation)
	// of every ownership row of #{consumer_type}, #{consumer_name};
	// instance_id is NULL while the lease is free.
	LeaseStatusOwnership StatementID = "lease.status_ownership"
	// LeaseStatusMembers returns (instance_id) of every membership of
	// #{consumer_type}, #{consumer_name}, live or not.
	LeaseStatusMembers StatementID = "lease.status_members"
	// LeaseStatusInstances returns (instance_id, host_name, started_at,
	// last_heartbeat, expires_at, is_live) of every instance row that is a
	// member of #{consumer_type}, #{consumer_name} or owns one of its
	// partitions; is_live is 1 while expires_at is not past on the database
	// clock, 0 once the row has lapsed.
	LeaseStatusInstances StatementID = "lease.status_instances"
)

var leaseStatusStatements = []StatementSpec{
	{ID: LeaseStatusOwnership, Binds: []string{"consumer_type", "consumer_name"}, Tables: ownershipTable,
		Returns: []string{"partition_no", "instance_id", "generation"}},
	{ID: LeaseStatusMembers, Binds: []string{"consumer_type", "consumer_name"}, Tables: []string{"partition_members_table"},
		Returns: []string{"instance_id"}},
	{ID: LeaseStatusInstances, Binds: []string{"consumer_type", "consumer_name"},
		Tables:  []string{"partition_instances_table", "partition_members_table", "partition_ownership_table"},
		Returns: []string{"instance_id", "host_name", "started_at", "last_heartbeat", "expires_at", "is_live"}},
}

// leaseStatusStatementsWith returns the operator-view statements with the
// engine's clock expression now put in (PartitionLeaseStatements merges
// them, so every dialect that calls it with its clock has them).
func leaseStatusStatementsWith(now string) map[StatementID]string {
	const consumer = ` WHERE consumer_type = #{consumer_type} AND consumer_name = #{consumer_name}`
	return map[StatementID]string{
		LeaseStatusOwnership: `SELECT partition_no, instance_id, generation FROM ${partition_ownership_table}` + consumer + ` ORDER BY partition_no`,
		LeaseStatusMembers:   `SELECT instance_id FROM ${partition_members_table}` + consumer + ` ORDER BY instance_id`,
		LeaseStatusInstances: `SELECT instance_id, host_name, started_at, last_heartbeat, expires_at, ` +
			`CASE WHEN expires_at >= ` + now + ` THEN 1 ELSE 0 END AS is_live FROM ${partition_instances_table} ` +
			`WHERE instance_id IN (SELECT instance_id FROM ${partition_members_table}` + consumer + `) ` +
			`OR instance_id IN (SELECT instance_id FROM ${partition_ownership_table}` + consumer + `) ORDER BY instance_id`,
	}
}
