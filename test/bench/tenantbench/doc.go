// Command tenantbench measures gpubridge's tenant apply against the
// testbed (test/bench/tenants.sh runs it): a cold apply of N tenants with U
// users each, a no-op apply of the same, the slurmrestd reads and writes of
// each, and, in the same run, the equivalent loop of one `sacctmgr -i add`
// per object (a QOS, an account and U users per tenant), on a sample of the
// tenants when -sacctmgr-tenants is smaller than -tenants (the total is
// then extrapolated, and labelled so). It prints the ratio.
//
// It uses a scratch store (database gpubridge_<prefix>bench, dropped after)
// and removes only objects named with its prefix; the real store's tenants
// are never touched (reconcile scope).
package main
