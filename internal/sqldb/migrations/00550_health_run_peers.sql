-- +goose Up
-- The other nodes of a two-node check run (nccl-2node), comma-separated: the
-- run's job spans node and peers, and its results are each node's.
ALTER TABLE health_runs ADD COLUMN peers VARCHAR(512) NOT NULL DEFAULT '' AFTER node;

-- +goose Down
ALTER TABLE health_runs DROP COLUMN peers;
