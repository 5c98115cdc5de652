// Package synth writes synthetic job rows into the testbed's slurmdbd job
// table (<cluster>_job_table) for the accounting benchmark and integration
// tests, and removes them again. Every row it writes has id_job >= MinJobID
// and an account starting with AccountPrefix, so it never touches real jobs
// or other people's rows. Only test/ code and tests import it.
package synth
