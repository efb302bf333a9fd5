-- read-model-epochs-schema.sql for sqlite: Tidemark's own mapping of the spec's H2/PostgreSQL DDL (SQLite is not in the spec).
-- Written by hand; see docs/spec-deviations.md, section SQLite.

-- SQLite
CREATE TABLE IF NOT EXISTS READ_MODEL_EPOCHS (
    projection     VARCHAR(255) NOT NULL,
    read_model_key VARCHAR(255) NOT NULL,
    epoch          BIGINT       NOT NULL,
    CONSTRAINT pk_read_model_epochs PRIMARY KEY (projection, read_model_key)
);
