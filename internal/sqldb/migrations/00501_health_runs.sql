-- +goose Up
-- Check runs: one Slurm batch job running one or more checks on a node, with
-- why it ran (schedule, acceptance, tenant, admin), who asked, its job id, and
-- the job's output kept as evidence (capped). Runs older than
-- health.retention are pruned with their results.
CREATE TABLE IF NOT EXISTS health_runs (
  id             BIGINT       NOT NULL AUTO_INCREMENT,
  cluster        VARCHAR(64)  NOT NULL,
  run_key        VARCHAR(64)  NOT NULL,
  node           VARCHAR(128) NOT NULL,
  checks         VARCHAR(1024) NOT NULL,
  purpose        VARCHAR(16)  NOT NULL,
  schedule_name  VARCHAR(64)  NOT NULL,
  held           TINYINT(1)   NOT NULL,
  tenant         VARCHAR(64)  NOT NULL,
  actor          VARCHAR(128) NOT NULL,
  state          VARCHAR(16)  NOT NULL,
  job_id         BIGINT       NOT NULL,
  model          VARCHAR(64)  NOT NULL,
  gpus           INT          NOT NULL,
  requested_at   DATETIME(6)  NOT NULL,
  finished_at    DATETIME(6)  NULL,
  note           VARCHAR(512) NOT NULL,
  evidence       MEDIUMBLOB   NULL,
  evidence_bytes INT          NOT NULL DEFAULT 0,
  PRIMARY KEY (id),
  UNIQUE KEY health_runs_key (run_key),
  KEY health_runs_state (cluster, state),
  KEY health_runs_tenant (cluster, tenant, requested_at),
  KEY health_runs_finished (cluster, finished_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- +goose Down
DROP TABLE IF EXISTS health_runs;
