-- +goose Up
-- End-time ranges [from_time, to_time) of finished runs that an ingest has
-- started to write per cluster (merged): a superset of ingest_coverage. An
-- ingest that reads its window in no particular order records the window
-- here with its first batch and in ingest_coverage only once complete, so a
-- later ingest compares the runs there with the ledger instead of inserting
-- them blindly, and a period is never closed on a half-written window.
CREATE TABLE IF NOT EXISTS ingest_touched (
  cluster   VARCHAR(64) NOT NULL,
  from_time BIGINT      NOT NULL,
  to_time   BIGINT      NOT NULL,
  PRIMARY KEY (cluster, from_time)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- +goose Down
DROP TABLE IF EXISTS ingest_touched;
