-- +goose Up
-- Closed billing periods. A period without a row is open. snapshot_json holds
-- the rate card and tenant labels the period was closed with.
CREATE TABLE IF NOT EXISTS ledger_period (
  cluster       VARCHAR(64)  NOT NULL,
  period        CHAR(7)      NOT NULL,
  closed_at     DATETIME(6)  NOT NULL,
  closed_by     VARCHAR(128) NOT NULL,
  line_count    BIGINT       NOT NULL,
  gpu_seconds   BIGINT       NOT NULL,
  amount_minor  BIGINT       NOT NULL,
  currency      CHAR(3)      NOT NULL,
  snapshot_json LONGTEXT     NOT NULL,
  PRIMARY KEY (cluster, period)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- +goose Down
DROP TABLE IF EXISTS ledger_period;
