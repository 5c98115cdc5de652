-- +goose Up
-- How far each source's stream of finished job runs (ordered by end time)
-- has been written to the ledger; updated in the same transaction as the lines.
CREATE TABLE IF NOT EXISTS ingest_watermark (
  cluster    VARCHAR(64)     NOT NULL,
  source     VARCHAR(32)     NOT NULL,
  through    BIGINT          NOT NULL,
  after_inx  BIGINT UNSIGNED NOT NULL,
  updated_at BIGINT          NOT NULL,
  PRIMARY KEY (cluster, source)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- +goose Down
DROP TABLE IF EXISTS ingest_watermark;
