-- +goose Up
-- Tenant bookings (bridge/reserve): one row per booking, kept after it ends or
-- is cancelled (the audit log has every change). held_* is what the Slurm
-- reservation holds, as the projector last made or saw it (NULL/'' when
-- nothing). span_* is the interval the booking commits capacity in: its window
-- widened by what Slurm holds; for a cancelled booking only what Slurm holds
-- (empty when nothing). Admission reads overlapping rows through the span
-- index, under the per-resource lock row of booking_locks.
CREATE TABLE IF NOT EXISTS bookings (
  id           BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
  cluster      VARCHAR(64)   NOT NULL,
  tenant       VARCHAR(64)   NOT NULL,
  kind         VARCHAR(8)    NOT NULL,
  resource     VARCHAR(128)  NOT NULL,
  count        INT           NOT NULL,
  start_at     DATETIME      NOT NULL,
  end_at       DATETIME      NOT NULL,
  purpose      VARCHAR(255)  NOT NULL DEFAULT '',
  state        VARCHAR(16)   NOT NULL,
  created_by   VARCHAR(128)  NOT NULL,
  created_at   DATETIME(6)   NOT NULL,
  updated_at   DATETIME(6)   NOT NULL,
  cancelled_at DATETIME(6)   NULL,
  cancelled_by VARCHAR(128)  NOT NULL DEFAULT '',
  held_name    VARCHAR(128)  NOT NULL DEFAULT '',
  held_start   DATETIME      NULL,
  held_end     DATETIME      NULL,
  held_count   INT           NOT NULL DEFAULT 0,
  held_nodes   TEXT          NOT NULL DEFAULT '',
  note         VARCHAR(1024) NOT NULL DEFAULT '',
  span_start   DATETIME AS (CASE
                 WHEN state = 'cancelled' THEN COALESCE(held_start, start_at)
                 ELSE LEAST(start_at, COALESCE(held_start, start_at)) END) STORED,
  span_end     DATETIME AS (CASE
                 WHEN state = 'cancelled' THEN COALESCE(held_end, start_at)
                 ELSE GREATEST(end_at, COALESCE(held_end, end_at)) END) STORED,
  KEY bookings_span (cluster, resource, span_end),
  KEY bookings_tenant (cluster, tenant, span_end)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- +goose Down
DROP TABLE IF EXISTS bookings;
