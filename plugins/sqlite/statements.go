package sqlite

import (
	"maps"
	"strings"

	"github.com/tidemarkdb/tidemark/core/dialect"
)

// statements is ANSI's statement set with SQLite's differences: INSERT …
// ON CONFLICT DO NOTHING seeds, LIMIT paging, the counter returning its
// new value, and the clock as ISO-8601 UTC text.
func statements() map[dialect.StatementID]string {
	st := dialect.ANSI().Statements
	expiry := `strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '+' || (#{lease_millis} / 1000.0) || ' seconds')`
	maps.Copy(st, dialect.LeaseStatements(now, expiry))
	maps.Copy(st, dialect.PartitionLeaseStatements(now, expiry))
	// The saga statements also add negative offsets (a purge's cutoff):
	// SQLite's modifier takes a sign of its own, not "+-".
	maps.Copy(st, dialect.SagaStatements(now, `strftime('%Y-%m-%dT%H:%M:%fZ', 'now', (#{lease_millis} / 1000.0) || ' seconds')`))
	dialect.LimitPaging(st) // after the saga statements: their reads page too
	// No row locks: the fencing transaction began with BEGIN IMMEDIATE (the
	// DSN's _txlock=immediate) and holds the database's one write lock, so
	// a takeover waits for it without FOR UPDATE.
	st[dialect.LeaseFence] = strings.TrimSuffix(st[dialect.LeaseFence], ` FOR UPDATE`)
	// PositionAllocate returns the new value itself.
	delete(st, dialect.PositionAllocated)
	maps.Copy(st, map[dialect.StatementID]string{
		dialect.PartitionSeed:    `INSERT INTO ${partition_metadata_table} (id, partitions) VALUES (1, #{partitions}) ON CONFLICT (id) DO NOTHING`,
		dialect.PositionSeed:     `INSERT INTO ${position_table} (id, val) VALUES (1, 0) ON CONFLICT (id) DO NOTHING`,
		dialect.PositionAllocate: `UPDATE ${position_table} SET val = val + #{count} WHERE id = 1 RETURNING val`,
		dialect.HWMSeed:          `INSERT INTO ${high_water_mark_store_table} (topic_name, high_water_mark, topic_start) VALUES (#{topic}, 0, 0) ON CONFLICT (topic_name) DO NOTHING`,
		dialect.DatabaseNow:      `SELECT ` + now,

		dialect.RMTopicSeed:     `INSERT INTO ${read_model_capture_positions_table} (topic, val) VALUES (#{topic}, 0) ON CONFLICT (topic) DO NOTHING`,
		dialect.RMTopicAllocate: `UPDATE ${read_model_capture_positions_table} SET val = val + #{count} WHERE topic = #{topic} RETURNING val`,
	})
	delete(st, dialect.RMTopicAllocated)
	return st
}
