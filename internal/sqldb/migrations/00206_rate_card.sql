-- +goose Up
-- Rate card versions; the row with the highest id is current. Insert-only.
CREATE TABLE IF NOT EXISTS rate_card (
  id         BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
  created_at DATETIME(6)     NOT NULL,
  actor      VARCHAR(128)    NOT NULL,
  card_yaml  LONGTEXT        NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- +goose Down
DROP TABLE IF EXISTS rate_card;
