-- +goose Up
-- What existed in Slurm before `gpubridge import` adopted a tenant's
-- account (tenant.Origin, as JSON: the account's description and
-- organization, its user associations' QOS settings, its coordinators, the
-- tenant QOS's description and limits if it existed). Releasing the tenant
-- (`delete tenant` without --purge: state "releasing") leaves those and
-- puts them back. NULL for a tenant gpubridge created. Safe to run again.
ALTER TABLE tenants ADD COLUMN IF NOT EXISTS origin_json MEDIUMTEXT NULL;

-- +goose Down
ALTER TABLE tenants DROP COLUMN IF EXISTS origin_json;
