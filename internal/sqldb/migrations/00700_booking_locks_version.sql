-- +goose Up
-- Admission writes its lock rows (version = version + 1) instead of only
-- locking them (SELECT ... FOR UPDATE): on Galera a row lock does not
-- conflict across nodes, only two writes of one row do, and certification
-- then aborts one of the two admissions (1213, retried by sqldb.WithTx).
ALTER TABLE booking_locks ADD COLUMN IF NOT EXISTS version BIGINT UNSIGNED NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE booking_locks DROP COLUMN IF EXISTS version;
