package h2

import (
	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/plugins/internal/specddl"
)

// eventStoreLastIndex serves the version reads (event.stream_version,
// event.stream_versions): ORDER BY aggregate_id, sequence_no DESC reads its
// first entry under an id.
const eventStoreLastIndex = `CREATE INDEX IF NOT EXISTS idx_${event_store_table}_last
    ON ${event_store_table} (aggregate_id, sequence_no DESC)`

// eventSourcingDDL holds the event-sourcing scripts: global position, event
// tables, snapshots (partition metadata is in specddl.CommonScripts).
var eventSourcingDDL = map[string][]string{
	dialect.ScriptEventStoreGlobalPosition: {
		specddl.CounterTable("event_store_global_position_table"),
		specddl.CounterSeedMerge("event_store_global_position_table"),
	},
	dialect.ScriptEventStore: {
		`CREATE TABLE IF NOT EXISTS ${event_store_table} (
    id              UUID         PRIMARY KEY,
    aggregate_id    VARCHAR(510) NOT NULL,
    aggregate_type  VARCHAR(510) NOT NULL,
    sequence_no     BIGINT       NOT NULL,
    event_type      VARCHAR(510) NOT NULL,
    event_revision  INT          NOT NULL DEFAULT 0,
    payload         CLOB         NOT NULL,
    metadata        CLOB,
    occurred_at     TIMESTAMP    NOT NULL DEFAULT CURRENT_TIMESTAMP,
    partition_key   SMALLINT     NOT NULL,
    global_position BIGINT       NOT NULL,
    UNIQUE (aggregate_id, sequence_no)
)`,
		specddl.EventStoreAggregateIndex,
		specddl.EventStoreGlobalIndex,
		specddl.EventStorePartitionIndex,
		// H2 reads an index forwards only: a stream's version read (its
		// last sequence_no) scans the stream's range of the unique index,
		// 100,000 rows for a 100,000-event stream. This index holds each
		// stream's last event first, so the read is one index entry.
		eventStoreLastIndex,
	},
	dialect.ScriptSnapshots: {
		`CREATE TABLE IF NOT EXISTS ${aggregate_snapshots_table} (
    id               UUID         PRIMARY KEY,
    aggregate_id     VARCHAR(510) NOT NULL,
    aggregate_type   VARCHAR(510) NOT NULL,
    sequence_no      BIGINT       NOT NULL,
    snapshot_version INT          NOT NULL DEFAULT 1,
    payload          CLOB         NOT NULL,
    created_at       TIMESTAMP    NOT NULL DEFAULT CURRENT_TIMESTAMP,
    UNIQUE (aggregate_id, sequence_no)
)`,
		specddl.SnapshotsLookupIndex,
	},
}
