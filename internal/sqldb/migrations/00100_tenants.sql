-- +goose Up
-- gpubridge tenants (bridge/tenantstore). Names are ASCII and compared
-- case-insensitively, like Slurm's account names: TeamA and teama collide.
CREATE TABLE IF NOT EXISTS tenants (
  name               VARCHAR(64)  CHARACTER SET ascii COLLATE ascii_general_ci NOT NULL PRIMARY KEY,
  description        VARCHAR(255) NOT NULL DEFAULT '',
  organization       VARCHAR(255) NOT NULL DEFAULT '',
  cpus               BIGINT       NULL,
  memory_mb          BIGINT       NULL,
  burst_enabled      TINYINT(1)   NOT NULL DEFAULT 0,
  burst_max_gpus     BIGINT       NOT NULL DEFAULT 0,
  burst_budget_minor BIGINT       NULL,
  state              VARCHAR(16)  NOT NULL DEFAULT 'active',
  adopted            TINYINT(1)   NOT NULL DEFAULT 0,
  created_at         DATETIME(6)  NOT NULL,
  updated_at         DATETIME(6)  NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- +goose Down
DROP TABLE IF EXISTS tenants;
