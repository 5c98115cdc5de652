-- +goose Up
-- A burst budget is a decimal written before any currency is known (2500.00
-- is 2500 yen with a JPY rate card, 2500.000 dinars with a KWD one), so it is
-- stored exactly as a decimal, not as cents. Existing values were cents.
-- Safe to run again: the copy only fills rows not yet copied.
ALTER TABLE tenants ADD COLUMN IF NOT EXISTS burst_budget DECIMAL(24,6) NULL AFTER burst_max_gpus;
UPDATE tenants SET burst_budget = burst_budget_minor / 100 WHERE burst_budget_minor IS NOT NULL AND burst_budget IS NULL;

-- +goose Down
ALTER TABLE tenants DROP COLUMN IF EXISTS burst_budget;
