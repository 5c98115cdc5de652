-- +goose Up
-- One row per tenant that has triggered a health check. Storing a tenant's
-- run writes this row first, then counts the tenant's runs of the last hour
-- and inserts the run in the same transaction: the row lock makes the count
-- and the insert one step for every CLI process and replica (on Galera, two
-- writes of the row conflict and one is retried), so the hourly cap
-- (health.tenantChecksPerHour) holds across restarts and processes.
CREATE TABLE IF NOT EXISTS health_tenant_checks (
  cluster  VARCHAR(64) NOT NULL,
  tenant   VARCHAR(64) NOT NULL,
  last_at  DATETIME(6) NOT NULL,
  PRIMARY KEY (cluster, tenant)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- +goose Down
DROP TABLE IF EXISTS health_tenant_checks;
