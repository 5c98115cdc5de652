// Package atomicfile replaces files so that a reader sees the old content or
// the new, never a part, and a crash leaves the old file in place: write a
// temporary file in the same directory, fsync it, rename it over the target,
// fsync the directory. It is the one file writer of the project for files
// that other programs read (gres.conf, the job_submit guard table, exports).
//
// It imports only the standard library and may be imported by any adapter
// or command; pure domain packages do not write files and do not import it.
package atomicfile
