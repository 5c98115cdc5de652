-- +goose Up
-- One account's lines of a billing period (a tenant's usage, its portal
-- page, its chargeback download, the API's usage route) are read through
-- these keys instead of every account's lines of the period: at 1,000
-- tenants the (cluster, booked_period) key alone made each tenant's read
-- scan the whole month (test/bench/portal.sh).
ALTER TABLE usage_ledger ADD KEY usage_ledger_account (cluster, booked_period, account);
ALTER TABLE booking_charge ADD KEY booking_charge_account (cluster, booked_period, account);

-- +goose Down
ALTER TABLE booking_charge DROP KEY booking_charge_account;
ALTER TABLE usage_ledger DROP KEY usage_ledger_account;
