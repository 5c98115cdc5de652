-- +goose Up
-- Where each booking's Slurm reservation held nodes, and from when: a row
-- each time the projector records the booking on other nodes than its last
-- row (reserve.Store Project; an empty node list is none: Slurm took a
-- drained node out of the reservation, and the booking is still there), so
-- that the node health credits follow a booking that was moved off a
-- drained node. nodes is "gpu-a,gpu-b"; since_us is Unix microseconds; the
-- first row of a booking counts from the booking's start.
CREATE TABLE IF NOT EXISTS booking_placements (
  cluster    VARCHAR(64)     NOT NULL,
  booking_id BIGINT UNSIGNED NOT NULL,
  since_us   BIGINT          NOT NULL,
  nodes      TEXT            NOT NULL,
  PRIMARY KEY (cluster, booking_id, since_us)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- The history begins with where each booking is now, as from the start.
INSERT IGNORE INTO booking_placements (cluster, booking_id, since_us, nodes)
  SELECT cluster, id, 0, held_nodes FROM bookings WHERE held_nodes <> '';

-- +goose Down
DROP TABLE IF EXISTS booking_placements;
