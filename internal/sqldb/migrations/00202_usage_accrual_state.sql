-- +goose Up
-- When each cluster's running jobs were last read (the accruals' as-of time).
CREATE TABLE IF NOT EXISTS usage_accrual_state (
  cluster VARCHAR(64) NOT NULL PRIMARY KEY,
  as_of   BIGINT      NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- +goose Down
DROP TABLE IF EXISTS usage_accrual_state;
