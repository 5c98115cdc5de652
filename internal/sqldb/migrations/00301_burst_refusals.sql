-- +goose Up
-- Quota-held jobs the burst controller leaves pending, and why: the state of
-- the last cycle (a job no longer refused is deleted). first_at is when the
-- job was first refused for its current reason.
CREATE TABLE IF NOT EXISTS burst_refusals (
  cluster      VARCHAR(64)   NOT NULL,
  job_id       BIGINT        NOT NULL,
  tenant       VARCHAR(64)   NOT NULL,
  user_name    VARCHAR(64)   NOT NULL,
  gpus         VARCHAR(255)  NOT NULL,
  gpu_count    BIGINT        NOT NULL,
  reason       VARCHAR(32)   NOT NULL,
  detail       VARCHAR(1024) NOT NULL,
  slurm_reason VARCHAR(64)   NOT NULL,
  first_at     DATETIME      NOT NULL,
  last_at      DATETIME(6)   NOT NULL,
  PRIMARY KEY (cluster, job_id),
  KEY burst_refusals_tenant (cluster, tenant)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- +goose Down
DROP TABLE IF EXISTS burst_refusals;
