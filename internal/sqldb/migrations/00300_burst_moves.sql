-- +goose Up
-- Jobs the burst controller moved to the on-demand tier. Insert-only; the key
-- (cluster, job_id, moved_at) is the move, moved_at being the time written in
-- the job's admin-comment marker, so a move found again in Slurm after a crash
-- is recorded once.
CREATE TABLE IF NOT EXISTS burst_moves (
  cluster      VARCHAR(64)  NOT NULL,
  job_id       BIGINT       NOT NULL,
  moved_at     DATETIME     NOT NULL,
  tenant       VARCHAR(64)  NOT NULL,
  user_name    VARCHAR(64)  NOT NULL,
  gpus         VARCHAR(255) NOT NULL,
  gpu_count    BIGINT       NOT NULL,
  slurm_reason VARCHAR(64)  NOT NULL,
  estimate     BIGINT       NOT NULL,
  submit_time  DATETIME     NULL,
  recorded_at  DATETIME(6)  NOT NULL,
  PRIMARY KEY (cluster, job_id, moved_at),
  KEY burst_moves_tenant (cluster, tenant, moved_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- +goose Down
DROP TABLE IF EXISTS burst_moves;
