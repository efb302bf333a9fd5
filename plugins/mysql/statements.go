package mysql

import (
	"maps"

	"github.com/tidemarkdb/tidemark/core/dialect"
)

// statements is ANSI's statement set with the differences of both flavors.
//
// The counter is allocated in one locking statement: LAST_INSERT_ID(expr)
// sets the session's LAST_INSERT_ID to the new value, which
// PositionAllocated reads back without touching the table again (neither
// MySQL nor MariaDB has UPDATE … RETURNING). The row stays locked until the
// transaction ends; a rollback restores it.
//
// Seeds use INSERT … ON DUPLICATE KEY UPDATE <key> = <key>, which never
// changes an existing row and, unlike INSERT IGNORE, lets every other error
// through. While an open append holds the counter row, the seed of that row
// waits for it (the duplicate check takes a lock on the existing row).
//
// Paging is LIMIT. Leases are computed on the database clock in UTC
// (UTC_TIMESTAMP(6)), so they do not depend on the session time zone. In
// HWMAcquire, the affected-row count is the count of changed rows (the
// driver's default, clientFoundRows=false); a renewal always changes
// lease_expires_at, the clock having moved by at least a microsecond.
//
// CommittedEnd is ANSI's plain SELECT: a consistent, non-locking read in
// InnoDB, which sees the last committed counter and never waits for an
// append.
func statements() map[dialect.StatementID]string {
	st := dialect.ANSI().Statements
	maps.Copy(st, dialect.LeaseStatements(now, now+` + INTERVAL (#{lease_millis} * 1000) MICROSECOND`))
	maps.Copy(st, dialect.PartitionLeaseStatements(now, now+` + INTERVAL (#{lease_millis} * 1000) MICROSECOND`))
	maps.Copy(st, dialect.SagaStatements(now, now+` + INTERVAL (#{lease_millis} * 1000) MICROSECOND`))
	dialect.LimitPaging(st) // after the saga statements: their reads page too
	maps.Copy(st, map[dialect.StatementID]string{
		dialect.PartitionSeed:     `INSERT INTO ${partition_metadata_table} (id, partitions) VALUES (1, #{partitions}) ON DUPLICATE KEY UPDATE id = id`,
		dialect.PositionSeed:      `INSERT INTO ${position_table} (id, val) VALUES (1, 0) ON DUPLICATE KEY UPDATE id = id`,
		dialect.PositionAllocate:  `UPDATE ${position_table} SET val = LAST_INSERT_ID(val + #{count}) WHERE id = 1`,
		dialect.PositionAllocated: `SELECT LAST_INSERT_ID()`,
		dialect.HWMSeed:           `INSERT INTO ${high_water_mark_store_table} (topic_name, high_water_mark, topic_start) VALUES (#{topic}, 0, 0) ON DUPLICATE KEY UPDATE topic_name = topic_name`,
		dialect.DatabaseNow:       `SELECT ` + now,

		dialect.RMTopicSeed:      `INSERT INTO ${read_model_capture_positions_table} (topic, val) VALUES (#{topic}, 0) ON DUPLICATE KEY UPDATE topic = topic`,
		dialect.RMTopicAllocate:  `UPDATE ${read_model_capture_positions_table} SET val = LAST_INSERT_ID(val + #{count}) WHERE topic = #{topic}`,
		dialect.RMTopicAllocated: `SELECT LAST_INSERT_ID()`,
		// A DELETE may not read its own table in a subquery (error 1093):
		// the superseding row joined instead.
		dialect.RMTopicCompactDelete: `DELETE r FROM ${read_model_capture_records_table} r JOIN ${read_model_capture_records_table} n ` +
			`ON n.topic = r.topic AND n.read_model_key = r.read_model_key AND n.topic_position > r.topic_position ` +
			`WHERE r.topic = #{topic} AND n.topic_position > #{after} AND n.topic_position <= #{through}`,
	})
	return st
}

// mariaDBEventInsert is ANSI's event insert with MariaDB's INSERT … RETURNING
// (10.5+): a single-event append with no expected version computes its
// sequence number in the insert and reads it back, so it sends BEGIN, the
// counter, the insert and COMMIT, and no version read (5 statements → 4).
// NextSequence reads this type's stream only, as PostgreSQL's does: an id
// another type holds in a shared table reads as empty, the row then hits
// UNIQUE (aggregate_id, sequence_no) and the core reports
// AggregateIDTakenError. MariaDB runs the subquery on the insert's own
// table inside VALUES (10.11, conformance); MySQL 8 refuses it (error
// 1093) and has no INSERT … RETURNING, so the MySQL flavor keeps the
// version read.
func mariaDBEventInsert() dialect.RowInsert {
	ins := dialect.ANSI().EventInsert
	ins.NextSequence = `(SELECT COALESCE(MAX(sequence_no), -1) FROM ${event_store_table} WHERE aggregate_id = #{aggregate_id} AND aggregate_type = #{aggregate_type}) + #{sequence_offset}`
	ins.ComputedTail = ` RETURNING global_position, sequence_no`
	return ins
}
