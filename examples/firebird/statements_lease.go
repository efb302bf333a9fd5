package firebird

import "github.com/tidemarkdb/tidemark/core/dialect"

// leaseStatements are the partition-lease statements on Firebird 3: ANSI's
// with DATEADD for the expiry (no interval arithmetic) and the fence's row
// lock written WITH LOCK (Firebird's FOR UPDATE alone only names a cursor,
// it locks nothing). A takeover that waited for a fenced apply fails with
// an update conflict once the apply commits (first updater wins); the
// coordinator retries it at its next rebalance. Catalogue() merges them
// with one line after ANSI's statements.
func leaseStatements() map[dialect.StatementID]string {
	st := dialect.PartitionLeaseStatements(`CURRENT_TIMESTAMP`, `DATEADD(CAST(#{lease_millis} AS BIGINT) MILLISECOND TO CURRENT_TIMESTAMP)`)
	st[dialect.LeaseFence] = `SELECT instance_id, generation FROM ${partition_ownership_table} ` +
		`WHERE consumer_type = #{consumer_type} AND consumer_name = #{consumer_name} AND partition_no = #{partition_no} WITH LOCK`
	return st
}
