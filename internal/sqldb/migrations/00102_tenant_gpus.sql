-- +goose Up
-- A tenant's GPU quota per type or MIG profile (GrpTRES gres/gpu:<gpu_type>=<quota>).
CREATE TABLE IF NOT EXISTS tenant_gpus (
  tenant   VARCHAR(64) CHARACTER SET ascii COLLATE ascii_general_ci NOT NULL,
  gpu_type VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  quota    BIGINT      NOT NULL,
  PRIMARY KEY (tenant, gpu_type),
  CONSTRAINT tenant_gpus_tenant FOREIGN KEY (tenant) REFERENCES tenants (name) ON DELETE CASCADE,
  CONSTRAINT tenant_gpus_quota CHECK (quota >= 0)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- +goose Down
DROP TABLE IF EXISTS tenant_gpus;
