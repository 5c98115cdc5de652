-- +goose Up
-- Credit lines of the ledger (node health: a job run that ended NODE_FAIL
-- or was killed by a gpubridge drain, booked GPU-hours lost while a booked
-- node was held). Insert-only, one row per idempotency key: writing the
-- same key again adds nothing. amount_minor is negative, in the minor unit
-- of currency (minor_units digits). loss_period is the period the loss belongs to; booked_period
-- the period whose bill carries the credit (the first open one from
-- loss_period: a credit for a closed period is booked as a correction in
-- the next open period). event_id links the health event (0: none).
CREATE TABLE IF NOT EXISTS ledger_credit (
  cluster       VARCHAR(64)     NOT NULL,
  credit_key    VARCHAR(191)    NOT NULL,
  kind          VARCHAR(32)     NOT NULL,
  loss_period   CHAR(7)         NOT NULL,
  booked_period CHAR(7)         NOT NULL,
  tenant        VARCHAR(64)     NOT NULL,
  account       VARCHAR(64)     NOT NULL,
  amount_minor  BIGINT          NOT NULL,
  currency      CHAR(3)         NOT NULL,
  minor_units   TINYINT UNSIGNED NOT NULL,
  event_id      BIGINT          NOT NULL,
  node          VARCHAR(255)    NOT NULL,
  job_id        INT UNSIGNED    NOT NULL,
  submit_time   BIGINT          NOT NULL,
  booking_id    BIGINT          NOT NULL,
  gpu_seconds   BIGINT          NOT NULL,
  loss_start    BIGINT          NOT NULL,
  loss_end      BIGINT          NOT NULL,
  reason        VARCHAR(1024)   NOT NULL,
  written_at    BIGINT          NOT NULL,
  PRIMARY KEY (cluster, credit_key),
  KEY ledger_credit_booked (cluster, booked_period)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- +goose Down
DROP TABLE IF EXISTS ledger_credit;
