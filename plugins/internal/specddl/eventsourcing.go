package specddl

// Event-sourcing and partitioning statements shared across dialects.

// The event store's indexes, the same on every dialect.
const (
	EventStoreAggregateIndex = `CREATE INDEX IF NOT EXISTS idx_${event_store_table}_aggregate
    ON ${event_store_table} (aggregate_id, aggregate_type, sequence_no)`
	EventStoreGlobalIndex = `CREATE INDEX IF NOT EXISTS idx_${event_store_table}_global
    ON ${event_store_table} (global_position)`
	EventStorePartitionIndex = `CREATE INDEX IF NOT EXISTS idx_${event_store_table}_partition
    ON ${event_store_table} (partition_key, global_position)`
)

// SnapshotsLookupIndex is the snapshot table's lookup index, the same on
// every dialect.
const SnapshotsLookupIndex = `CREATE INDEX IF NOT EXISTS idx_${aggregate_snapshots_table}_lookup
    ON ${aggregate_snapshots_table} (aggregate_id, aggregate_type, snapshot_version, sequence_no DESC)`

// partitionMetadataTable is the whole partition-metadata script (see
// CommonScripts).
const partitionMetadataTable = `CREATE TABLE IF NOT EXISTS ${partition_metadata_table} (
    id         SMALLINT NOT NULL,
    partitions INT      NOT NULL,
    PRIMARY KEY (id)
)`
