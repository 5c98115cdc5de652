-- +goose Up
-- Bookings in the ledger. usage_ledger.booking and usage_accrual.booking:
-- the booking whose Slurm reservation a job ran in (tier 'booked'; 0 for
-- every other line). booking_charge: the charge of each booking, insert-only
-- like usage_ledger: one line per (cluster, booking, usage period, GPU type,
-- revision); revision 0 is the first charge, later revisions hold
-- differences (the booking was changed or cancelled); booked_period is the
-- period whose bill carries the line (later than usage_period when that was
-- closed). charge_start/charge_end are the charged part of the window in
-- the usage period (Unix seconds).
ALTER TABLE usage_ledger ADD COLUMN IF NOT EXISTS booking BIGINT NOT NULL DEFAULT 0;
ALTER TABLE usage_accrual ADD COLUMN IF NOT EXISTS booking BIGINT NOT NULL DEFAULT 0;
CREATE TABLE IF NOT EXISTS booking_charge (
  cluster       VARCHAR(64)       NOT NULL,
  booking_id    BIGINT            NOT NULL,
  usage_period  CHAR(7)           NOT NULL,
  gpu_type      VARCHAR(64)       NOT NULL,
  revision      SMALLINT UNSIGNED NOT NULL,
  booked_period CHAR(7)           NOT NULL,
  account       VARCHAR(64)       NOT NULL,
  gpu_count     INT UNSIGNED      NOT NULL,
  charge_start  BIGINT            NOT NULL,
  charge_end    BIGINT            NOT NULL,
  gpu_seconds   BIGINT            NOT NULL,
  written_at    BIGINT            NOT NULL,
  PRIMARY KEY (cluster, booking_id, usage_period, gpu_type, revision),
  KEY booking_charge_booked (cluster, booked_period)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- +goose Down
DROP TABLE IF EXISTS booking_charge;
ALTER TABLE usage_accrual DROP COLUMN IF EXISTS booking;
ALTER TABLE usage_ledger DROP COLUMN IF EXISTS booking;
