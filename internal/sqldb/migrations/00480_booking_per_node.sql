-- +goose Up
-- A whole-node booking's GPUs per node of its class, by type, as admission
-- counted them ("1g.10gb:7,3g.40gb:2", sorted by type): what the booking is
-- charged for, whatever the cluster holds later. '' is a class without GPUs;
-- NULL a GPU booking, or a node booking stored before admission recorded the
-- figure (not charged until a modify records it).
ALTER TABLE bookings ADD COLUMN IF NOT EXISTS per_node VARCHAR(1024) NULL;

-- +goose Down
ALTER TABLE bookings DROP COLUMN IF EXISTS per_node;
