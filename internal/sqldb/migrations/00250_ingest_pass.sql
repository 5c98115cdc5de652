-- +goose Up
-- The last completed pass of each kind per cluster and source: 'changes'
-- (rows slurmdbd changed, by mod_time, since the previous changes pass) and
-- 'verify' (every open period re-read in full and compared with the ledger).
-- as_of is the source's clock at the pass's snapshot; from_time where it
-- started (the mod_time it read from, or the start of the re-read window);
-- finished_at the host's clock when it committed.
CREATE TABLE IF NOT EXISTS ingest_pass (
  cluster     VARCHAR(64) NOT NULL,
  source      VARCHAR(32) NOT NULL,
  kind        VARCHAR(16) NOT NULL,
  as_of       BIGINT      NOT NULL,
  from_time   BIGINT      NOT NULL,
  finished_at BIGINT      NOT NULL,
  runs        BIGINT      NOT NULL,
  line_count  BIGINT      NOT NULL,
  corrections BIGINT      NOT NULL,
  PRIMARY KEY (cluster, source, kind)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- +goose Down
DROP TABLE IF EXISTS ingest_pass;
