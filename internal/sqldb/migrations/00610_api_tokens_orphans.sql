-- +goose Up
-- API tokens whose tenant was removed before removal took its tokens with it
-- (bridge/tenantstore Remove, issue 25): they would open a tenant created
-- later under the same name. Admin tokens (tenant '') stay. Safe to run again.
DELETE FROM api_tokens WHERE tenant <> '' AND tenant NOT IN (SELECT name FROM tenants);

-- +goose Down
SELECT 1;
