// Package leasetest opens gpubridge's database as a MariaDB Galera node
// answers it: every MariaDB user-lock function (GET_LOCK, RELEASE_LOCK,
// IS_USED_LOCK, IS_FREE_LOCK, RELEASE_ALL_LOCKS) fails with error 1235,
// the way a server with wsrep_on=ON refuses them (MDEV-30473). A test
// that runs a path through such a pool proves, by running and not by
// grep, that the path takes no user lock. Tests only.
package leasetest
