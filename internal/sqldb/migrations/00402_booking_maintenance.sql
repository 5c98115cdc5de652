-- +goose Up
-- Admin maintenance windows (gpubridge add maintenance): the nodes' GPUs
-- cannot be booked in [start_at, end_at). nodes is a comma-separated list.
CREATE TABLE IF NOT EXISTS booking_maintenance (
  id         BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
  cluster    VARCHAR(64)   NOT NULL,
  nodes      TEXT          NOT NULL,
  start_at   DATETIME      NOT NULL,
  end_at     DATETIME      NOT NULL,
  reason     VARCHAR(255)  NOT NULL DEFAULT '',
  created_by VARCHAR(128)  NOT NULL,
  created_at DATETIME(6)   NOT NULL,
  KEY booking_maintenance_end (cluster, end_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- +goose Down
DROP TABLE IF EXISTS booking_maintenance;
