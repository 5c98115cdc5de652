-- +goose Up
-- Optimistic versions (bridge/tenantstore Commit): 1 when a tenant is
-- created, one more with every change; a write computed from an older
-- version is refused ("changed since you read it").
ALTER TABLE tenants ADD COLUMN IF NOT EXISTS version BIGINT NOT NULL DEFAULT 1;

-- +goose Down
ALTER TABLE tenants DROP COLUMN IF EXISTS version;
