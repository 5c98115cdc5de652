-- +goose Up
-- A tenant's booking policy (bridge/tenant.BookingPolicy). Each column is
-- NULL when the tenant does not set that key (the configured default,
-- bookings.defaultPolicy, applies); 0 seconds is "no limit". Safe to run
-- again: every statement checks what exists.
ALTER TABLE tenants
  ADD COLUMN IF NOT EXISTS booking_max_window_s  BIGINT        NULL,
  ADD COLUMN IF NOT EXISTS booking_min_lead_s    BIGINT        NULL,
  ADD COLUMN IF NOT EXISTS booking_max_horizon_s BIGINT        NULL,
  ADD COLUMN IF NOT EXISTS booking_spend_limit   DECIMAL(24,6) NULL;

-- The most GPUs per type a tenant may have booked at once (0 forbids the
-- type); a type without a row keeps the default's limit.
CREATE TABLE IF NOT EXISTS tenant_booking_gpus (
  tenant   VARCHAR(64) CHARACTER SET ascii COLLATE ascii_general_ci NOT NULL,
  gpu_type VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  max_gpus BIGINT      NOT NULL,
  PRIMARY KEY (tenant, gpu_type),
  CONSTRAINT tenant_booking_gpus_tenant FOREIGN KEY (tenant) REFERENCES tenants (name) ON DELETE CASCADE,
  CONSTRAINT tenant_booking_gpus_max CHECK (max_gpus >= 0)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- +goose Down
DROP TABLE IF EXISTS tenant_booking_gpus;
ALTER TABLE tenants
  DROP COLUMN IF EXISTS booking_max_window_s,
  DROP COLUMN IF EXISTS booking_min_lead_s,
  DROP COLUMN IF EXISTS booking_max_horizon_s,
  DROP COLUMN IF EXISTS booking_spend_limit;
