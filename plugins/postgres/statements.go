package postgres

import (
	"maps"

	"github.com/tidemarkdb/tidemark/core/dialect"
)

// clock is the database clock of the lease statements: clock_timestamp()
// moves within a transaction (now() is the transaction's start), so a
// lease taken late in a long transaction is not already short.
const clock = `clock_timestamp()`

// utcClock is clock as a TIMESTAMP in UTC: the saga statements' clock.
const utcClock = `(clock_timestamp() AT TIME ZONE 'UTC')`

// statements is ANSI's statement set with PostgreSQL's differences:
// ON CONFLICT DO NOTHING seeds, LIMIT paging, the clock, and the
// SEQUENCE_XID_HORIZON statements in place of the counter's.
func statements() map[dialect.StatementID]string {
	st := dialect.ANSI().Statements
	maps.Copy(st, dialect.LeaseStatements(clock, clock+` + #{lease_millis} * interval '1 millisecond'`))
	maps.Copy(st, dialect.PartitionLeaseStatements(clock, clock+` + #{lease_millis} * interval '1 millisecond'`))
	// The saga tables' TIMESTAMP columns hold UTC whatever the session's
	// TimeZone (clock_timestamp() would be stored and compared in it).
	maps.Copy(st, dialect.SagaStatements(utcClock, utcClock+` + #{lease_millis} * interval '1 millisecond'`))
	dialect.LimitPaging(st) // after the saga statements: their reads page too
	// The positions come from a CACHE 1 sequence, not a counter row.
	delete(st, dialect.PositionSeed)
	delete(st, dialect.PositionAllocate)
	delete(st, dialect.PositionAllocated)
	maps.Copy(st, map[dialect.StatementID]string{
		dialect.PartitionSeed:     `INSERT INTO ${partition_metadata_table} (id, partitions) VALUES (1, #{partitions}) ON CONFLICT (id) DO NOTHING`,
		dialect.PositionCacheSize: `SELECT cache_size FROM pg_sequences WHERE schemaname = current_schema() AND sequencename = lower('${position_table}')`,
		dialect.PositionFixCache:  `ALTER SEQUENCE ${position_table} CACHE 1`,

		dialect.HWMSeed: `INSERT INTO ${high_water_mark_store_table} (topic_name, high_water_mark) VALUES (#{topic}, 0) ON CONFLICT (topic_name) DO NOTHING`,
		dialect.HWMSetPending: `UPDATE ${high_water_mark_store_table} SET pending_end = #{pending_end}, pending_horizon = #{pending_horizon} ` +
			`WHERE topic_name = #{topic} AND lease_owner = #{owner} AND lease_expires_at >= ` + clock,
		dialect.HWMClearPending: `UPDATE ${high_water_mark_store_table} SET pending_end = NULL, pending_horizon = NULL ` +
			`WHERE topic_name = #{topic} AND lease_owner = #{owner} AND lease_expires_at >= ` + clock,
		// The last value any session drew (CACHE 1), committed or not:
		// a sequence is not transactional.
		dialect.CommittedEnd:     `SELECT ` + sequenceEnd,
		dialect.CurrentXID:       `SELECT pg_current_xact_id()::text::bigint`,
		dialect.OldestRunningXID: `SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint`,
		dialect.OldestHolderXID:  oldestHolderXID,
		dialect.HWMNotify:        `SELECT pg_notify('tidemark_hwm', #{topic})`,
		// The UPDATE of a data-modifying CTE runs exactly once; pg_notify
		// runs per row it returned, so only a move notifies, and the
		// notification is delivered when the statement commits.
		dialect.HWMAdvanceNotify: `WITH m AS (` + st[dialect.HWMAdvance] + ` RETURNING topic_name) ` +
			`SELECT pg_notify('tidemark_hwm', m.topic_name)::text AS notified FROM m`,
		dialect.EndHorizon:  endHorizon,
		dialect.DatabaseNow: `SELECT ` + clock,
	})
	rmTopicStatements(st)
	return st
}

// sequenceEnd is the last position the sequence handed out (0 before the
// first), read under the sequence's buffer lock by pg_sequence_last_value.
// Not a plain scan of the sequence relation (SELECT last_value FROM seq):
// when nextval logs ahead it writes the value it logs, up to 32 past the
// last one handed out, into the sequence tuple for the length of its WAL
// insert, holding the buffer's exclusive lock, and a scan reads the
// tuple's values after letting go of its share lock. Such a read names
// positions no append has drawn yet, the mark moves past them, and the
// appends that draw them later commit behind it: every reader that trusts
// the mark skips them.
const sequenceEnd = `COALESCE(pg_sequence_last_value('${position_table}'), 0)`

// endHorizon is xid.end_horizon. The sequence's value is read in a
// MATERIALIZED CTE, so it is copied out before the outer row is projected;
// the CASE then assigns the transaction id only once the value is known
// and only when it is past the mark (an idle poll assigns no id: ~10 a
// second would otherwise count towards wraparound for nothing).
// pg_current_snapshot() is the statement's snapshot, taken before either.
const endHorizon = `WITH e AS MATERIALIZED (SELECT ` + sequenceEnd + ` AS end_pos) ` +
	`SELECT e.end_pos, CASE WHEN e.end_pos > #{mark} THEN pg_current_xact_id()::text::bigint END, ` +
	`pg_snapshot_xmin(pg_current_snapshot())::text::bigint FROM e`

// eventInsert is ANSI's multi-row insert with the position drawn by the
// database and returned.
func eventInsert() dialect.RowInsert {
	ins := dialect.ANSI().EventInsert
	// pg_current_xact_id() assigns the transaction id before nextval is
	// evaluated (CASE evaluates its condition first), so every position is
	// drawn by a transaction that already has its id.
	ins.Row = `(#{id}, #{aggregate_id}, #{aggregate_type}, #{sequence_no}, #{event_type}, #{event_revision}, #{payload}, #{metadata}, #{occurred_at}, #{partition_key}, CASE WHEN pg_current_xact_id() IS NOT NULL THEN nextval('${event_store_global_position_table}') END)`
	ins.Tail = ` RETURNING global_position, sequence_no`
	// Both read this type's stream only (the spec's index on
	// (aggregate_id, aggregate_type, sequence_no) answers them): an id
	// another type holds in a shared table reads as empty, the row then
	// hits UNIQUE (aggregate_id, sequence_no) and the core reports
	// AggregateIDTakenError. Unfiltered, an Any append continued the other
	// type's sequence: two streams merged.
	ins.NextSequence = `(SELECT COALESCE(MAX(sequence_no), -1) FROM ${event_store_table} WHERE aggregate_id = #{aggregate_id} AND aggregate_type = #{aggregate_type}) + #{sequence_offset}`
	ins.CheckedSequence = `CASE WHEN (SELECT COALESCE(MAX(sequence_no), -1) FROM ${event_store_table} WHERE aggregate_id = #{aggregate_id} AND aggregate_type = #{aggregate_type}) = CAST(#{expected_version} AS BIGINT) THEN CAST(#{sequence_no} AS BIGINT) END`
	return ins
}
