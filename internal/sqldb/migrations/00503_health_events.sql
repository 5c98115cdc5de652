-- +goose Up
-- Lifecycle changes of nodes (drains, resumes, overrides): the evidence of why
-- a node was drained and what credits link to. Kept when runs are pruned.
CREATE TABLE IF NOT EXISTS health_events (
  id         BIGINT       NOT NULL AUTO_INCREMENT,
  cluster    VARCHAR(64)  NOT NULL,
  node       VARCHAR(128) NOT NULL,
  at         DATETIME(6)  NOT NULL,
  from_state VARCHAR(16)  NOT NULL,
  to_state   VARCHAR(16)  NOT NULL,
  reason     VARCHAR(512) NOT NULL,
  run_id     BIGINT       NOT NULL,
  fatal      TINYINT(1)   NOT NULL,
  actor      VARCHAR(128) NOT NULL,
  PRIMARY KEY (id),
  KEY health_events_node (cluster, node, at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- +goose Down
DROP TABLE IF EXISTS health_events;
