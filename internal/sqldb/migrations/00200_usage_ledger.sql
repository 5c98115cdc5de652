-- +goose Up
-- The usage ledger: insert-only lines of GPU-seconds. One line per
-- (cluster, job run, usage period, tier, GPU type, revision); revision 0 is
-- the first measurement, later revisions hold differences (corrections).
-- booked_period is the period whose bill carries the line; it differs from
-- usage_period for adjustments (the usage period was closed when written).
-- Periods are 'YYYY-MM' (UTC months); times are Unix seconds.
CREATE TABLE IF NOT EXISTS usage_ledger (
  cluster       VARCHAR(64)       NOT NULL,
  job_id        INT UNSIGNED      NOT NULL,
  submit_time   BIGINT            NOT NULL,
  usage_period  CHAR(7)           NOT NULL,
  tier          VARCHAR(16)       NOT NULL,
  gpu_type      VARCHAR(64)       NOT NULL,
  revision      SMALLINT UNSIGNED NOT NULL,
  booked_period CHAR(7)           NOT NULL,
  account       VARCHAR(64)       NOT NULL,
  user_name     VARCHAR(64)       NOT NULL,
  gpu_count     INT UNSIGNED      NOT NULL,
  usage_start   BIGINT            NOT NULL,
  usage_end     BIGINT            NOT NULL,
  gpu_seconds   BIGINT            NOT NULL,
  written_at    BIGINT            NOT NULL,
  PRIMARY KEY (cluster, job_id, submit_time, usage_period, tier, gpu_type, revision),
  KEY usage_ledger_booked (cluster, booked_period)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- +goose Down
DROP TABLE IF EXISTS usage_ledger;
