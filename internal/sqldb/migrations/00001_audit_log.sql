-- +goose Up
CREATE TABLE IF NOT EXISTS audit_log (
  id          BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
  at          DATETIME(6)     NOT NULL,
  actor       VARCHAR(128)    NOT NULL,
  action      VARCHAR(32)     NOT NULL,
  object_kind VARCHAR(32)     NOT NULL,
  object_name VARCHAR(255)    NOT NULL,
  before_json LONGTEXT        NULL,
  after_json  LONGTEXT        NULL,
  KEY audit_at (at),
  KEY audit_object (object_kind, object_name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- +goose Down
DROP TABLE IF EXISTS audit_log;
