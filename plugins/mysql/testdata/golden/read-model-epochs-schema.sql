-- read-model-epochs-schema.sql for mysql, extracted from table-schemas.txt by tools/specextract.
-- Deliberate deviations are hand edits, listed in docs/spec-deviations.md.

-- MySQL / MariaDB
CREATE TABLE IF NOT EXISTS READ_MODEL_EPOCHS (
    projection     VARCHAR(255) CHARACTER SET utf8mb4 /*M!100202 COLLATE utf8mb4_nopad_bin */ /*!80017 COLLATE utf8mb4_0900_bin */ NOT NULL,
    read_model_key VARCHAR(255) CHARACTER SET utf8mb4 /*M!100202 COLLATE utf8mb4_nopad_bin */ /*!80017 COLLATE utf8mb4_0900_bin */ NOT NULL,
    epoch          BIGINT       NOT NULL,
    PRIMARY KEY (projection, read_model_key)
) DEFAULT CHARSET = utf8mb4;
