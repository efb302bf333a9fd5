package hsqldb

import "github.com/tidemarkdb/tidemark/core/dialect"

// eventSourcingDDL holds the event-sourcing and partitioning scripts: global position, event tables, snapshots, partition metadata.
var eventSourcingDDL = map[string][]string{
	dialect.ScriptEventStoreGlobalPosition: {
		`CREATE TABLE IF NOT EXISTS ${event_store_global_position_table} (
    id  TINYINT NOT NULL PRIMARY KEY,
    val BIGINT  NOT NULL
)`,
		`MERGE INTO ${event_store_global_position_table} t
    USING (VALUES (1, 0)) AS s (id, val) ON t.id = s.id
    WHEN NOT MATCHED THEN INSERT (id, val) VALUES (s.id, s.val)`,
	},
	dialect.ScriptEventStore: {
		`CREATE TABLE IF NOT EXISTS ${event_store_table} (
    id              VARCHAR(36)  PRIMARY KEY,
    aggregate_id    VARCHAR(510) NOT NULL,
    aggregate_type  VARCHAR(510) NOT NULL,
    sequence_no     BIGINT       NOT NULL,
    event_type      VARCHAR(510) NOT NULL,
    event_revision  INT          DEFAULT 0 NOT NULL,
    payload         CLOB         NOT NULL,
    metadata        CLOB,
    occurred_at     TIMESTAMP    DEFAULT CURRENT_TIMESTAMP NOT NULL,
    partition_key   SMALLINT     NOT NULL,
    global_position BIGINT       NOT NULL,
    UNIQUE (aggregate_id, sequence_no)
)`,
		`CREATE INDEX IF NOT EXISTS idx_${event_store_table}_aggregate
    ON ${event_store_table} (aggregate_id, aggregate_type, sequence_no)`,
		`CREATE INDEX IF NOT EXISTS idx_${event_store_table}_global
    ON ${event_store_table} (global_position)`,
		`CREATE INDEX IF NOT EXISTS idx_${event_store_table}_partition
    ON ${event_store_table} (partition_key, global_position)`,
	},
	dialect.ScriptSnapshots: {
		`CREATE TABLE IF NOT EXISTS ${aggregate_snapshots_table} (
    id               VARCHAR(36)  PRIMARY KEY,
    aggregate_id     VARCHAR(510) NOT NULL,
    aggregate_type   VARCHAR(510) NOT NULL,
    sequence_no      BIGINT       NOT NULL,
    snapshot_version INT          DEFAULT 1 NOT NULL,
    payload          CLOB         NOT NULL,
    created_at       TIMESTAMP    DEFAULT CURRENT_TIMESTAMP NOT NULL,
    UNIQUE (aggregate_id, sequence_no)
)`,
		`CREATE INDEX IF NOT EXISTS idx_${aggregate_snapshots_table}_lookup
    ON ${aggregate_snapshots_table} (aggregate_id, aggregate_type, snapshot_version, sequence_no DESC)`,
	},
	dialect.ScriptPartitionMetadata: {
		`CREATE TABLE IF NOT EXISTS ${partition_metadata_table} (
    id         SMALLINT NOT NULL,
    partitions INT      NOT NULL,
    PRIMARY KEY (id)
)`,
	},
}
