package postgres

import (
	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/plugins/internal/specddl"
)

// eventSourcingDDL holds the event-sourcing scripts: global position, event
// tables, snapshots (partition metadata is in specddl.CommonScripts).
var eventSourcingDDL = map[string][]string{
	dialect.ScriptEventStoreGlobalPosition: {
		cacheOneSequence("event_store_global_position_table"),
	},
	dialect.ScriptEventStore: {
		`CREATE TABLE IF NOT EXISTS ${event_store_table} (
    id              UUID         PRIMARY KEY,
    aggregate_id    VARCHAR(255) NOT NULL,
    aggregate_type  VARCHAR(255) NOT NULL,
    sequence_no     BIGINT       NOT NULL,
    event_type      VARCHAR(255) NOT NULL,
    event_revision  INT          NOT NULL DEFAULT 0,
    payload         JSON         NOT NULL,
    metadata        JSON,
    occurred_at     TIMESTAMPTZ  NOT NULL DEFAULT now(),
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
    id               UUID         PRIMARY KEY,
    aggregate_id     VARCHAR(255) NOT NULL,
    aggregate_type   VARCHAR(255) NOT NULL,
    sequence_no      BIGINT       NOT NULL,
    snapshot_version INT          NOT NULL DEFAULT 1,
    payload          JSON         NOT NULL,
    created_at       TIMESTAMPTZ  NOT NULL DEFAULT now(),
    UNIQUE (aggregate_id, sequence_no)
)`,
		specddl.SnapshotsLookupIndex,
	},
}

// cacheOneSequence returns the CREATE SEQUENCE of a position sequence named
// by the placeholder, with CACHE 1 so that positions are drawn in order.
func cacheOneSequence(placeholder string) string {
	return `CREATE SEQUENCE IF NOT EXISTS ${` + placeholder + `} START WITH 1 CACHE 1`
}
