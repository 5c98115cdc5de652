-- +goose Up
-- The writer lock is a lease now (00195): the lease row names its holder.
DROP TABLE IF EXISTS writer_lock_holders;

-- +goose Down
CREATE TABLE IF NOT EXISTS writer_lock_holders (
  lock_name     VARCHAR(96)     CHARACTER SET ascii COLLATE ascii_bin NOT NULL PRIMARY KEY,
  connection_id BIGINT UNSIGNED NOT NULL,
  holder        VARCHAR(255)    NOT NULL,
  acquired_at   DATETIME(6)     NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
