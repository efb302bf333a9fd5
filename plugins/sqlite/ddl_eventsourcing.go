package sqlite

import (
	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/plugins/internal/specddl"
)

// eventSourcingDDL holds the event-sourcing scripts: global position, event
// tables, snapshots (partition metadata is in specddl.CommonScripts).
var eventSourcingDDL = map[string][]string{
	dialect.ScriptEventStoreGlobalPosition: {
		specddl.CounterTable("event_store_global_position_table"),
		counterSeedInsert("event_store_global_position_table"),
	},
	dialect.ScriptEventStore: {
		`CREATE TABLE IF NOT EXISTS ${event_store_table} (
    id              CHAR(36)     NOT NULL PRIMARY KEY,
    aggregate_id    VARCHAR(255) NOT NULL,
    aggregate_type  VARCHAR(255) NOT NULL,
    sequence_no     BIGINT       NOT NULL,
    event_type      VARCHAR(255) NOT NULL,
    event_revision  INT          NOT NULL DEFAULT 0,
    payload         TEXT         NOT NULL,
    metadata        TEXT,
    occurred_at     TIMESTAMP    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    partition_key   SMALLINT     NOT NULL,
    global_position BIGINT       NOT NULL,
    UNIQUE (aggregate_id, sequence_no)
)`,
		specddl.EventStoreAggregateIndex,
		specddl.EventStoreGlobalIndex,
		specddl.EventStorePartitionIndex,
	},
	dialect.ScriptSnapshots: {
		`CREATE TABLE IF NOT EXISTS ${aggregate_snapshots_table} (
    id               CHAR(36)     NOT NULL PRIMARY KEY,
    aggregate_id     VARCHAR(255) NOT NULL,
    aggregate_type   VARCHAR(255) NOT NULL,
    sequence_no      BIGINT       NOT NULL,
    snapshot_version INT          NOT NULL DEFAULT 1,
    payload          TEXT         NOT NULL,
    created_at       TIMESTAMP    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    UNIQUE (aggregate_id, sequence_no)
)`,
		specddl.SnapshotsLookupIndex,
	},
}

// counterSeedInsert returns the INSERT that seeds the counter table named by
// the placeholder with (1, 0) and never overwrites an existing row.
func counterSeedInsert(placeholder string) string {
	return `INSERT INTO ${` + placeholder + `} (id, val) VALUES (1, 0)
    ON CONFLICT (id) DO NOTHING`
}
