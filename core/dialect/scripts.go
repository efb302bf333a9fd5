package dialect

// ScriptSpec is the dialect-independent part of a Script: its name, area,
// the placeholder it is instantiated per, and the objects it creates.
type ScriptSpec struct {
	Area     Area
	Name     string
	PerTable string
	Objects  []Object
}

// Standard script names, in the order the core creates them. A position
// object always comes before the tables that draw from it, CONSUMERS before
// the tables referencing it.
const (
	ScriptEventStoreGlobalPosition = "event-store-global-position-schema.sql"
	ScriptEventStore               = "event-store-schema.sql"
	ScriptSnapshots                = "snapshot-schema.sql"
	ScriptPartitionMetadata        = "partition-metadata-schema.sql"
	ScriptEventCaptureGlobalPos    = "event-capture-global-position-schema.sql"
	ScriptEventCaptureRecords      = "event-capture-records-schema.sql"
	ScriptHighWaterMarkStore       = "high-water-mark-store-schema.sql"
	ScriptTopicCompaction          = "topic-compaction-schema.sql"
	ScriptConsumerCheckpoints      = "consumer-checkpoints-schema.sql" // CONSUMERS + CONSUMER_CHECKPOINTS
	ScriptConsumerUndelivered      = "consumer-undelivered-messages-schema.sql"
	ScriptConsumerSkipped          = "consumer-skipped-messages-schema.sql"
	ScriptPartitionInstances       = "partition-instances-schema.sql"
	ScriptPartitionOwnership       = "partition-ownership-schema.sql"
	ScriptPartitionMembers         = "partition-members-schema.sql"
	ScriptReadModelTopic           = "read-model-topic-schema.sql" // positions + records
	ScriptReadModelEpochs          = "read-model-epochs-schema.sql"
	ScriptQueryTable               = "query-table-schema.sql"
	ScriptSagaInstances            = "create-saga-table.sql"
	ScriptSagaDeadlines            = "create-deadline-table.sql"
	ScriptSagaDeadlineLocks        = "create-deadline-lock-table.sql"
	ScriptEventPublicationMetadata = "event-publication-metadata-schema.sql"
)

func tables(placeholders ...string) []Object {
	out := make([]Object, len(placeholders))
	for i, p := range placeholders {
		out[i] = Object{Placeholder: p, Kind: ObjectTable}
	}
	return out
}

// StandardScripts lists every script of the spec in creation order. A
// dialect supplies Statements for each (see Scripts); positionKind is
// ObjectSequence for SequenceXIDHorizon dialects and ObjectTable otherwise,
// and applies to the global-position objects (and, on PostgreSQL, to
// READ_MODEL_CAPTURE_POSITIONS).
func StandardScripts(positionKind ObjectKind) []ScriptSpec {
	pos := func(p string) Object { return Object{Placeholder: p, Kind: positionKind} }
	return []ScriptSpec{
		{AreaEventSourcing, ScriptEventStoreGlobalPosition, "", []Object{pos("event_store_global_position_table")}},
		{AreaEventSourcing, ScriptEventStore, "event_store_table", tables("event_store_table")},
		{AreaEventSourcing, ScriptSnapshots, "aggregate_snapshots_table", tables("aggregate_snapshots_table")},
		{AreaPartitioning, ScriptPartitionMetadata, "", tables("partition_metadata_table")},
		{AreaMessaging, ScriptEventCaptureGlobalPos, "", []Object{pos("event_capture_global_position_table")}},
		{AreaMessaging, ScriptEventCaptureRecords, "", tables("event_capture_records_table")},
		{AreaMessaging, ScriptHighWaterMarkStore, "", tables("high_water_mark_store_table")},
		{AreaMessaging, ScriptTopicCompaction, "", tables("topic_compaction_table")},
		{AreaMessaging, ScriptConsumerCheckpoints, "", tables("consumers_table", "consumer_checkpoints_table")},
		{AreaMessaging, ScriptConsumerUndelivered, "", tables("consumer_undelivered_messages_table")},
		{AreaMessaging, ScriptConsumerSkipped, "", tables("consumer_skipped_messages_table")},
		{AreaMessaging, ScriptPartitionInstances, "", tables("partition_instances_table")},
		{AreaMessaging, ScriptPartitionOwnership, "", tables("partition_ownership_table")},
		{AreaMessaging, ScriptPartitionMembers, "", tables("partition_members_table")},
		{AreaMessaging, ScriptReadModelTopic, "", []Object{pos("read_model_capture_positions_table"), {Placeholder: "read_model_capture_records_table", Kind: ObjectTable}}},
		{AreaCQRS, ScriptReadModelEpochs, "", tables("read_model_epochs_table")},
		{AreaCQRS, ScriptQueryTable, "query_table", tables("query_table")},
		{AreaSaga, ScriptSagaInstances, "saga_instances_table", tables("saga_instances_table")},
		{AreaSaga, ScriptSagaDeadlines, "", tables("saga_deadlines_table")},
		{AreaSaga, ScriptSagaDeadlineLocks, "", tables("saga_deadline_locks_table")},
		{AreaPublication, ScriptEventPublicationMetadata, "", tables("event_publication_metadata_table")},
	}
}

// Scripts builds a dialect's Script list from StandardScripts and the
// dialect's statements per script name. A script name missing from
// statements is an error at catalogue validation, not here.
func Scripts(positionKind ObjectKind, statements map[string][]string) []Script {
	specs := StandardScripts(positionKind)
	out := make([]Script, 0, len(specs))
	for _, s := range specs {
		out = append(out, Script{Area: s.Area, Name: s.Name, PerTable: s.PerTable, Objects: s.Objects, Statements: statements[s.Name]})
	}
	return out
}
