-- +goose Up
-- One check's result in a run: verdict, reason, measured values (JSON), when
-- it ran and its exit code. tenant is the tenant that triggered the run (its
-- results are shown to that tenant only).
CREATE TABLE IF NOT EXISTS health_results (
  id          BIGINT       NOT NULL AUTO_INCREMENT,
  cluster     VARCHAR(64)  NOT NULL,
  run_id      BIGINT       NOT NULL,
  node        VARCHAR(128) NOT NULL,
  check_name  VARCHAR(64)  NOT NULL,
  verdict     VARCHAR(8)   NOT NULL,
  reason      VARCHAR(1024) NOT NULL,
  values_json TEXT         NOT NULL,
  started_at  DATETIME(6)  NULL,
  ended_at    DATETIME(6)  NULL,
  exit_code   INT          NOT NULL,
  job_id      BIGINT       NOT NULL,
  tenant      VARCHAR(64)  NOT NULL,
  purpose     VARCHAR(16)  NOT NULL,
  at          DATETIME(6)  NOT NULL,
  PRIMARY KEY (id),
  KEY health_results_node (cluster, node, at),
  KEY health_results_run (cluster, run_id),
  KEY health_results_tenant (cluster, tenant, at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- +goose Down
DROP TABLE IF EXISTS health_results;
