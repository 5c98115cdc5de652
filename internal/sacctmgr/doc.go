// Package sacctmgr runs Slurm's sacctmgr for the writes that slurmrestd
// makes one object at a time: creating many user associations with their
// new users (`sacctmgr load` of generated files, several at once) and
// deleting many QOS or accounts (one `sacctmgr delete` of a name list).
// docs/scale.md has the measurements that make it worth a second path:
// slurmdbd adds one association per REST request at about 2 ms, and
// deletes one QOS per request with a slurmctld update of about 43 ms.
//
// It is an adapter (os/exec), used by bridge/reconcile/slurmadapter when
// reconcile.sacctmgr names the command. A load file lowercases what
// follows a line's name and turns quotes into backquotes, so accounts
// (descriptions, organizations) are never loaded; names it cannot carry
// exactly are refused by LoadableName, and the caller writes those
// objects through slurmrestd instead.
package sacctmgr
