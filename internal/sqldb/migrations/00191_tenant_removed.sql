-- +goose Up
-- Tenants whose deletion finished (bridge/tenantstore Remove): their names
-- stay known, so that the usage of the month they were deleted in (and any
-- month before) is still labelled with the tenant, not "(no tenant)". A
-- tenant declared again under the same name keeps its tombstone (harmless:
-- the name is a tenant's either way). Safe to run again.
CREATE TABLE IF NOT EXISTS tenants_removed (
  name       VARCHAR(64) CHARACTER SET ascii COLLATE ascii_general_ci NOT NULL PRIMARY KEY,
  removed_at DATETIME(6) NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- +goose Down
DROP TABLE IF EXISTS tenants_removed;
