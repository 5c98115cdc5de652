-- +goose Up
-- A tenant's users; is_admin makes the user a coordinator of the tenant's account.
CREATE TABLE IF NOT EXISTS tenant_users (
  tenant    VARCHAR(64) CHARACTER SET ascii COLLATE ascii_general_ci NOT NULL,
  user_name VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  is_admin  TINYINT(1)  NOT NULL DEFAULT 0,
  PRIMARY KEY (tenant, user_name),
  KEY tenant_users_user (user_name),
  CONSTRAINT tenant_users_tenant FOREIGN KEY (tenant) REFERENCES tenants (name) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- +goose Down
DROP TABLE IF EXISTS tenant_users;
