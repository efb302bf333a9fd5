package dialect

// ansiLeaseStatements are the partition-lease statements in ANSI SQL on
// ANSI's clock (PartitionLeaseStatements with CURRENT_TIMESTAMP).
func ansiLeaseStatements() map[StatementID]string {
	return PartitionLeaseStatements(ansiNow, ansiLeaseExpiry)
}

// PartitionLeaseStatements returns every partition-lease statement in ANSI's
// text with the engine's clock expression now and its lease expiry (now plus
// #{lease_millis} milliseconds) put in, as LeaseStatements does for the
// high-water mark: a dialect whose clock or date arithmetic differs calls it
// with its own and merges the result after ANSI's statements:
//
//	maps.Copy(st, dialect.PartitionLeaseStatements(now, expiry))
//
// Every expiry is written and compared on the database clock; no statement
// binds a time of the application's. Correlated subqueries name the outer
// table by its own name (no alias), which every engine of the suite accepts
// in UPDATE and DELETE. LeaseFence locks with " FOR UPDATE": engines without
// that row lock override it (SQL Server's UPDLOCK hint, SQLite's plain
// SELECT under its serialised writer, HSQLDB's LeaseFenceLock UPDATE).
func PartitionLeaseStatements(now, expiry string) map[StatementID]string {
	const key = ` WHERE consumer_type = #{consumer_type} AND consumer_name = #{consumer_name} AND partition_no = #{partition_no}`
	const consumer = ` WHERE consumer_type = #{consumer_type} AND consumer_name = #{consumer_name}`
	liveOwner := `EXISTS (SELECT 1 FROM ${partition_instances_table} WHERE ${partition_instances_table}.instance_id = ${partition_ownership_table}.instance_id AND ${partition_instances_table}.expires_at >= ` + now + `)`
	st := leaseStatusStatementsWith(now) // the operator view (statements_lease_status.go)
	liveMember := `EXISTS (SELECT 1 FROM ${partition_instances_table} WHERE ${partition_instances_table}.instance_id = ${partition_members_table}.instance_id AND ${partition_instances_table}.expires_at >= ` + now + `)`
	for id, text := range map[StatementID]string{
		LeaseInstanceInsert: `INSERT INTO ${partition_instances_table} (instance_id, host_name, started_at, last_heartbeat, expires_at) ` +
			`VALUES (#{instance_id}, #{host_name}, ` + now + `, ` + now + `, ` + expiry + `)`,
		LeaseHeartbeat: `UPDATE ${partition_instances_table} SET last_heartbeat = ` + now + `, expires_at = ` + expiry +
			` WHERE instance_id = #{instance_id} AND expires_at >= ` + now,
		LeaseInstanceDelete: `DELETE FROM ${partition_instances_table} WHERE instance_id = #{instance_id}`,
		LeaseInstancesPurge: `DELETE FROM ${partition_instances_table} WHERE expires_at < ` + now,

		LeaseMemberInsert:      `INSERT INTO ${partition_members_table} (consumer_type, consumer_name, instance_id) VALUES (#{consumer_type}, #{consumer_name}, #{instance_id})`,
		LeaseMemberDelete:      `DELETE FROM ${partition_members_table}` + consumer + ` AND instance_id = #{instance_id}`,
		LeaseMembersOfInstance: `DELETE FROM ${partition_members_table} WHERE instance_id = #{instance_id}`,
		LeaseMembersPurge:      `DELETE FROM ${partition_members_table} WHERE NOT ` + liveMember,
		LeaseLiveMembers: `SELECT instance_id FROM ${partition_members_table}` + consumer + ` AND ` + liveMember +
			` ORDER BY instance_id`,

		LeaseOwnership: `SELECT o.partition_no, o.instance_id, o.generation, CASE WHEN i.instance_id IS NULL THEN 0 ELSE 1 END, i.last_heartbeat ` +
			`FROM ${partition_ownership_table} o LEFT JOIN ${partition_instances_table} i ON i.instance_id = o.instance_id AND i.expires_at >= ` + now +
			` WHERE o.consumer_type = #{consumer_type} AND o.consumer_name = #{consumer_name} ORDER BY o.partition_no`,
		LeaseClaimInsert: `INSERT INTO ${partition_ownership_table} (consumer_type, consumer_name, partition_no, instance_id, generation) ` +
			`VALUES (#{consumer_type}, #{consumer_name}, #{partition_no}, #{instance_id}, 1)`,
		LeaseTakeover: `UPDATE ${partition_ownership_table} SET instance_id = #{instance_id}, generation = generation + 1` + key +
			` AND generation = #{generation} AND (instance_id IS NULL OR NOT ` + liveOwner + `)`,
		LeaseHandBack:              `UPDATE ${partition_ownership_table} SET instance_id = NULL` + key + ` AND instance_id = #{instance_id} AND generation = #{generation}`,
		LeaseReleaseInstance:       `UPDATE ${partition_ownership_table} SET instance_id = NULL WHERE instance_id = #{instance_id}`,
		LeaseReleaseConsumer:       `UPDATE ${partition_ownership_table} SET instance_id = NULL` + consumer + ` AND instance_id = #{instance_id}`,
		LeaseDeleteConsumer:        `DELETE FROM ${partition_ownership_table}` + consumer,
		LeaseDeleteConsumerMembers: `DELETE FROM ${partition_members_table}` + consumer,
		LeaseFence:                 `SELECT instance_id, generation FROM ${partition_ownership_table}` + key + ` FOR UPDATE`,
	} {
		st[id] = text
	}
	return st
}
