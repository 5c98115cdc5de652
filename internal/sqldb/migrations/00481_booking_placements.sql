-- +goose Up
-- Where each booking's Slurm reservation held nodes, and from when: a row
-- each time the node list the projector records changes (reserve.Store
-- Project), so that the node health credits follow a booking that was moved
-- off a drained node. nodes is "gpu-a,gpu-b"; '' while a new reservation's
-- nodes are not known yet (no credit for that time). since_us is Unix
-- microseconds; the first row of a booking counts from the booking's start.
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
