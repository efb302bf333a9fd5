package specddl

// CQRS, saga and publication statements shared across dialects.

// QueryTable is the query-table template of PostgreSQL and H2, whose message
// id is a UUID (HSQLDB and SQLite declare text ids).
const QueryTable = `CREATE TABLE IF NOT EXISTS ${query_table} (
    read_model_id   VARCHAR(255) NOT NULL,
    message_id      UUID         NOT NULL,
    ${query_columns}
    PRIMARY KEY (read_model_id)
)`

// SagaInstancesTable is the saga-instances table of PostgreSQL and H2.
const SagaInstancesTable = `CREATE TABLE IF NOT EXISTS ${saga_instances_table} (
    id          UUID         NOT NULL PRIMARY KEY,
    saga_type   VARCHAR(255) NOT NULL,
    saga_id     VARCHAR(255) NOT NULL,
    state_json  TEXT         NOT NULL,
    version     BIGINT       NOT NULL,
    completed_at TIMESTAMP,
    UNIQUE (saga_type, saga_id)
)`

// SagaDeadlinesTable is the saga-deadlines table of PostgreSQL and H2.
const SagaDeadlinesTable = `CREATE TABLE IF NOT EXISTS ${saga_deadlines_table} (
    id            UUID         NOT NULL PRIMARY KEY,
    saga_type     VARCHAR(255) NOT NULL,
    saga_id       VARCHAR(255) NOT NULL,
    name          VARCHAR(255) NOT NULL,
    due_at        TIMESTAMP    NOT NULL,
    payload_json  TEXT,
    metadata_json TEXT,
    UNIQUE (saga_type, saga_id, name)
)`

// SagaDeadlinesDueAtIndex is the saga-deadlines table's index, the same on
// every dialect.
const SagaDeadlinesDueAtIndex = `CREATE INDEX IF NOT EXISTS idx_${saga_deadlines_table}_due_at
    ON ${saga_deadlines_table} (due_at)`

// EventPublicationMetadataCompletionIndex is the publication-metadata
// table's index, the same on every dialect.
const EventPublicationMetadataCompletionIndex = `CREATE INDEX IF NOT EXISTS idx_event_pub_meta_completion
  ON ${event_publication_metadata_table} (COMPLETION_DATE)`

// readModelEpochsTable is the whole read-model-epochs script (see
// CommonScripts).
const readModelEpochsTable = `CREATE TABLE IF NOT EXISTS ${read_model_epochs_table} (
    projection     VARCHAR(255) NOT NULL,
    read_model_key VARCHAR(255) NOT NULL,
    epoch          BIGINT       NOT NULL,
    CONSTRAINT pk_${read_model_epochs_table} PRIMARY KEY (projection, read_model_key)
)`

// sagaDeadlineLocksTable is the whole saga-deadline-locks script (see
// CommonScripts).
const sagaDeadlineLocksTable = `CREATE TABLE IF NOT EXISTS ${saga_deadline_locks_table} (
    lock_name  VARCHAR(255) NOT NULL,
    owner      VARCHAR(255) NOT NULL,
    expires_at TIMESTAMP    NOT NULL,
    PRIMARY KEY (lock_name)
)`
