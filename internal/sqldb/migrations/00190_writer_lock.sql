-- +goose Up
-- Who holds a cluster's one-writer lock (internal/writerlock): the lock
-- itself is a MariaDB named lock (GET_LOCK) held on a pinned connection;
-- this row, written by the holder on that connection, lets a waiting
-- writer name it. Rows of connections that are gone are ignored.
CREATE TABLE IF NOT EXISTS writer_lock_holders (
  lock_name     VARCHAR(96)     CHARACTER SET ascii COLLATE ascii_bin NOT NULL PRIMARY KEY,
  connection_id BIGINT UNSIGNED NOT NULL,
  holder        VARCHAR(255)    NOT NULL,
  acquired_at   DATETIME(6)     NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- +goose Down
DROP TABLE IF EXISTS writer_lock_holders;
