// Package acctest helps the accounting integration tests: scratch copies of
// gpubridge's database on the testbed's MariaDB.
package acctest
