-- +goose Up
-- The cents column is replaced by burst_budget (00900).
ALTER TABLE tenants DROP COLUMN IF EXISTS burst_budget_minor;

-- +goose Down
ALTER TABLE tenants ADD COLUMN IF NOT EXISTS burst_budget_minor BIGINT NULL AFTER burst_max_gpus;
UPDATE tenants SET burst_budget_minor = ROUND(burst_budget * 100) WHERE burst_budget IS NOT NULL;
