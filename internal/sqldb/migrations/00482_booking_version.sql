-- +goose Up
-- A booking's version: every change of the row (modify, cancel, the
-- projector's record) adds one, and a change is made only when the row still
-- has the version the change was computed from (bridge/reserve ErrChanged),
-- so two changes racing on one booking never lose one of them.
ALTER TABLE bookings ADD COLUMN IF NOT EXISTS version BIGINT UNSIGNED NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE bookings DROP COLUMN IF EXISTS version;
