-- read-model-epochs-schema.sql for hsqldb, extracted from table-schemas.txt by tools/specextract.
-- Deliberate deviations are hand edits, listed in docs/spec-deviations.md.
-- PostgreSQL, H2, HSQLDB
CREATE TABLE IF NOT EXISTS READ_MODEL_EPOCHS (
    projection     VARCHAR(255) NOT NULL,
    read_model_key VARCHAR(255) NOT NULL,
    epoch          BIGINT       NOT NULL,
    CONSTRAINT pk_read_model_epochs PRIMARY KEY (projection, read_model_key)
);
