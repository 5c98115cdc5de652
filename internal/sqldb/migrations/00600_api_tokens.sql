-- +goose Up
-- Tenant API tokens (cmd/gpubridge/api/tokenstore): only the SHA-256 of each token's
-- 256-bit secret is kept. tenant is '' for an admin token. A deleted token's
-- row is removed (the audit log keeps its record); a lookup by hash finds
-- nothing, so the token is refused.
CREATE TABLE IF NOT EXISTS api_tokens (
  id           BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
  hash         BINARY(32)      NOT NULL,
  tenant       VARCHAR(64)     NOT NULL,
  name         VARCHAR(64)     NOT NULL,
  scope        VARCHAR(16)     NOT NULL,
  expires_at   DATETIME(6)     NULL,
  created_at   DATETIME(6)     NOT NULL,
  created_by   VARCHAR(128)    NOT NULL,
  last_used_at DATETIME(6)     NULL,
  UNIQUE KEY api_tokens_hash (hash),
  UNIQUE KEY api_tokens_name (tenant, name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- +goose Down
DROP TABLE IF EXISTS api_tokens;
