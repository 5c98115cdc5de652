-- +goose Up
-- Month-to-date use of still-running job runs. Not part of the ledger: each
-- ingest replaces a cluster's rows as a whole, in one transaction.
CREATE TABLE IF NOT EXISTS usage_accrual (
  cluster      VARCHAR(64)  NOT NULL,
  job_id       INT UNSIGNED NOT NULL,
  submit_time  BIGINT       NOT NULL,
  usage_period CHAR(7)      NOT NULL,
  tier         VARCHAR(16)  NOT NULL,
  gpu_type     VARCHAR(64)  NOT NULL,
  account      VARCHAR(64)  NOT NULL,
  user_name    VARCHAR(64)  NOT NULL,
  gpu_count    INT UNSIGNED NOT NULL,
  usage_start  BIGINT       NOT NULL,
  usage_end    BIGINT       NOT NULL,
  gpu_seconds  BIGINT       NOT NULL,
  PRIMARY KEY (cluster, job_id, submit_time, usage_period, tier, gpu_type)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- +goose Down
DROP TABLE IF EXISTS usage_accrual;
