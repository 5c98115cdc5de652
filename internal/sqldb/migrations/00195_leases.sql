-- +goose Up
-- Leases (internal/lease): the leader of a cluster, the writer lock of a
-- cluster and the ledger lock of a cluster, one row each, replacing the
-- MariaDB named locks (GET_LOCK) that Galera refuses. A taker writes the
-- row in a short transaction, so two takers on two Galera nodes conflict
-- at certification and only one commits. epoch only grows: each take adds
-- one, and every fenced write checks (and touches) the row with its epoch
-- in its own transaction. Times are the database's (UTC_TIMESTAMP(6)).
CREATE TABLE IF NOT EXISTS leases (
  name       VARCHAR(191)    NOT NULL PRIMARY KEY,
  holder     VARCHAR(96)     CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  info       VARCHAR(255)    NOT NULL,
  epoch      BIGINT UNSIGNED NOT NULL,
  taken_at   DATETIME(6)     NOT NULL,
  renewed_at DATETIME(6)     NOT NULL,
  expires_at DATETIME(6)     NOT NULL,
  fences     BIGINT UNSIGNED NOT NULL DEFAULT 0
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- +goose Down
DROP TABLE IF EXISTS leases;
