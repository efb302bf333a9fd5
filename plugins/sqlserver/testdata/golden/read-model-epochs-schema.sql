-- read-model-epochs-schema.sql for sqlserver, extracted from table-schemas.txt by tools/specextract.
-- Deliberate deviations are hand edits, listed in docs/spec-deviations.md.

-- SQL Server
IF OBJECT_ID(N'READ_MODEL_EPOCHS', N'U') IS NULL
    CREATE TABLE READ_MODEL_EPOCHS (
        projection     NVARCHAR(255) COLLATE Latin1_General_100_BIN2 NOT NULL,
        read_model_key NVARCHAR(255) COLLATE Latin1_General_100_BIN2 NOT NULL,
        epoch          BIGINT        NOT NULL,
        CONSTRAINT pk_read_model_epochs PRIMARY KEY NONCLUSTERED (projection, read_model_key)
    );
