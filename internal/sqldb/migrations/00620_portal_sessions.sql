-- +goose Up
-- The portal's sessions (cmd/gpubridge/api/sessionstore): a signed-in
-- browser's session, found by the SHA-256 of its cookie's random id (the id
-- itself is not kept). person is the Slurm user of a JWT sign-in, token_hash
-- the API token of a token sign-in; the rights are read again on every
-- request. Expired rows are removed as new sessions are made.
CREATE TABLE IF NOT EXISTS portal_sessions (
  id_hash    BINARY(32)   NOT NULL PRIMARY KEY,
  csrf       VARCHAR(64)  NOT NULL,
  person     VARCHAR(128) NOT NULL,
  token_hash BINARY(32)   NULL,
  created_at DATETIME(6)  NOT NULL,
  expires_at DATETIME(6)  NOT NULL,
  KEY portal_sessions_expires (expires_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- +goose Down
DROP TABLE IF EXISTS portal_sessions;
