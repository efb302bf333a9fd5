-- create-saga-table.sql for mysql, extracted from table-schemas.txt by tools/specextract.
-- Deliberate deviations are hand edits, listed in docs/spec-deviations.md.
-- Hand edit (deviation MY-1): DEFAULT CHARSET = utf8mb4 added to every CREATE TABLE that lacked it.

-- MySQL
CREATE TABLE IF NOT EXISTS SAGA_INSTANCES (
    id          CHAR(36)     NOT NULL PRIMARY KEY,
    saga_type   VARCHAR(255) CHARACTER SET utf8mb4 /*M!100202 COLLATE utf8mb4_nopad_bin */ /*!80017 COLLATE utf8mb4_0900_bin */ NOT NULL,
    saga_id     VARCHAR(255) CHARACTER SET utf8mb4 /*M!100202 COLLATE utf8mb4_nopad_bin */ /*!80017 COLLATE utf8mb4_0900_bin */ NOT NULL,
    state_json  LONGTEXT     NOT NULL,
    version     BIGINT       NOT NULL,
    completed_at DATETIME(6),
    UNIQUE (saga_type, saga_id)
) DEFAULT CHARSET = utf8mb4
