-- +goose Up
-- A tenant's finance cost centre (tenant spec costCenter), named on every
-- row of the chargeback exports; empty when the tenant sets none.
ALTER TABLE tenants ADD COLUMN IF NOT EXISTS cost_center VARCHAR(64) NOT NULL DEFAULT '' AFTER organization;

-- +goose Down
ALTER TABLE tenants DROP COLUMN IF EXISTS cost_center;
