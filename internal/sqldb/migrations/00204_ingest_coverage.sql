-- +goose Up
-- End-time ranges [from_time, to_time) of finished runs already ingested per
-- cluster (merged). A run ending outside them cannot have ledger lines yet.
CREATE TABLE IF NOT EXISTS ingest_coverage (
  cluster   VARCHAR(64) NOT NULL,
  from_time BIGINT      NOT NULL,
  to_time   BIGINT      NOT NULL,
  PRIMARY KEY (cluster, from_time)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- +goose Down
DROP TABLE IF EXISTS ingest_coverage;
