-- +goose Up
-- One row per (cluster, resource), e.g. (testbed, gpu:h100). Admission locks
-- the rows of the resources a booking takes (SELECT ... FOR UPDATE) in the
-- transaction that re-reads the overlapping bookings and inserts the new one,
-- so two admissions on one resource never interleave, across processes and
-- daemon replicas. Rows are created on first use (outside that transaction).
CREATE TABLE IF NOT EXISTS booking_locks (
  cluster  VARCHAR(64)  NOT NULL,
  resource VARCHAR(128) NOT NULL,
  PRIMARY KEY (cluster, resource)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- +goose Down
DROP TABLE IF EXISTS booking_locks;
