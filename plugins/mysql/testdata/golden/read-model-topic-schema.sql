-- read-model-topic-schema.sql for mysql, extracted from table-schemas.txt by tools/specextract.
-- Deliberate deviations are hand edits, listed in docs/spec-deviations.md.

-- MySQL / MariaDB
CREATE TABLE IF NOT EXISTS READ_MODEL_CAPTURE_POSITIONS (
    topic       VARCHAR(255) CHARACTER SET utf8mb4 /*M!100202 COLLATE utf8mb4_nopad_bin */ /*!80017 COLLATE utf8mb4_0900_bin */ NOT NULL PRIMARY KEY,
    val         BIGINT       NOT NULL
) DEFAULT CHARSET = utf8mb4;

CREATE TABLE IF NOT EXISTS READ_MODEL_CAPTURE_RECORDS (
    id                  CHAR(36)     CHARACTER SET ascii COLLATE ascii_bin NOT NULL PRIMARY KEY,
    topic               VARCHAR(255) CHARACTER SET utf8mb4 /*M!100202 COLLATE utf8mb4_nopad_bin */ /*!80017 COLLATE utf8mb4_0900_bin */ NOT NULL,
    topic_position      BIGINT       NOT NULL,
    partition_key       SMALLINT     NOT NULL,
    read_model_key      VARCHAR(255) CHARACTER SET utf8mb4 /*M!100202 COLLATE utf8mb4_nopad_bin */ /*!80017 COLLATE utf8mb4_0900_bin */ NOT NULL,
    read_model_type     VARCHAR(255) NOT NULL,
    read_model_revision INT          NOT NULL DEFAULT 0,
    payload             LONGTEXT     NOT NULL,
    metadata            LONGTEXT,
    cascade_depth       INT          NOT NULL,
    deleted             BOOLEAN      NOT NULL,
    occurred_at         DATETIME(6)  NOT NULL,
    UNIQUE KEY uq_read_model_capture_records_position (topic, topic_position),
    INDEX idx_read_model_capture_records_key (topic, read_model_key, topic_position),
    INDEX idx_read_model_capture_records_partition (topic, partition_key, topic_position)
) DEFAULT CHARSET = utf8mb4;
