-- +goose Up
-- gpubridge's health record of each node it manages: its lifecycle state
-- (burn-in, serving, suspect, drained, requalify, external), the passes a held
-- node has and needs, why, and the checks that failed or warned. version is
-- the optimistic lock every writer compares and sets.
CREATE TABLE IF NOT EXISTS health_nodes (
  cluster     VARCHAR(64)  NOT NULL,
  node        VARCHAR(128) NOT NULL,
  state       VARCHAR(16)  NOT NULL,
  since       DATETIME(6)  NOT NULL,
  passes      INT          NOT NULL,
  needed      INT          NOT NULL,
  reason      VARCHAR(512) NOT NULL,
  checks_json TEXT         NOT NULL,
  fatal       TINYINT(1)   NOT NULL,
  version     BIGINT       NOT NULL,
  updated_at  DATETIME(6)  NOT NULL,
  PRIMARY KEY (cluster, node)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- +goose Down
DROP TABLE IF EXISTS health_nodes;
