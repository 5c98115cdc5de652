// Package slurmstr is the one reader (and writer) of the strings Slurm uses
// for resources: every package that meets one of them calls this package,
// and nothing else parses them. Pure: no I/O; it imports only the standard
// library, and any package of the module may import it.
//
// The kinds, and the function for each:
//
//	TRES list, name form   cpu=8,mem=16000M,billing=8,gres/gpu:h100=4     ParseTRES, FormatTRES
//	  (CfgTRES, AllocTRES, TRES=, tres_req_str, tres_alloc_str, sacct AllocTRES/ReqTRES, sacctmgr GrpTRES)
//	TRES list, id form     1=8,2=16000,3=18446744073709551614,1001=2      ParseTRESIDs, ScanTRESIDs, FormatTRESIDs
//	  (slurm_acct_db: tres_alloc, tres_req, grp_tres, max_tres_pu, ...)
//	per-unit requests      gres/gpu:h100:2   cpu=2,gres/gpu:1g.10gb=1       ParseTRESPer
//	  (tres_per_job, tres_per_node, tres_per_socket, tres_per_task, squeue %b)
//	GRES                   gpu:h100:4(S:0-3)   gpu:1g.10gb:6(IDX:0-5)       ParseGRES, FormatGRES
//	  (node Gres=/GresUsed=, sinfo %G, REST gres/gres_used, JOB_GRES=, job GRES=, gres_detail, slurm.conf Gres=)
//	hostlist               gpu-[01-03,7],cpu-a                            ExpandHostlist, CompressHostlist
//	bracketed lists        a comma list whose items hold commas in brackets  SplitTop
//	GPU TRES names         gres/gpu:h100 -> h100, gres/gpu -> untyped     TRES.GPU, GPUOf, KeyGPU
//
// testdata/strings.tsv holds every such string the testbed printed
// (testdata/capture.sh records them again); the tests parse each one, and
// the fuzz tests start from them.
//
// # Every odd form, and what it reads as
//
// Where Slurm's meaning is known the string is read that way; where it is
// not (or a person could mean two things), the string is refused with an
// error wrapping ErrSyntax that names the entry and the reason. Nothing is
// guessed.
//
//	""  and  "(null)"                    empty, in every kind (Slurm's "nothing")
//	"N/A"                                empty GRES and request (GresDrain=N/A, squeue %b); refused as a TRES list
//	"None assigned"                      no hosts (sacct and slurmdbd for a job that never ran); ALL is refused
//	mem=2G, mem=16000M, mem=2048         all megabytes: 2048, 16000, 2048 (mem, gres/gpumem, bb/*); 512K is refused
//	fs/disk=10G, bandwidth:lustre:4G     other units are ones: 10737418240, 4294967296 (K, M, G, T, P are powers of 1024)
//	mem=1.5G, mem=2g, cpu=-1, cpu=+1     refused: Slurm prints neither fractions nor lower-case units nor signs
//	cpu=00:01:05 (TRESUsageInTot)        refused: a time, not a count
//	gres/gpu:h100=NONE                   Infinite (INFINITE64, "no limit")
//	3=18446744073709551614 (id form)     NoValue (NO_VAL64: energy not gathered); ...615 is Infinite; other counts > 2^63-1 refused
//	,1=2   1=2,   1=2,,3=4               empty entries skipped in TRES lists (Slurm may lead with a comma); refused in GRES strings
//	cpu=1,cpu=2 / gpu:a:1,gpu:a:2        returned as given, in order: the caller says what a repeat means (ingest and burst add)
//	gpu                                  one, untyped (slurm.conf and --gres default to a count of 1)
//	gpu:4   gpu:4K                       untyped, 4 and 4096
//	gpu:h100                             type h100, one
//	gpu:3090                             4 digits: untyped, 3090 GPUs (as Slurm reads NAME:NUMBER); write gpu:3090:1 for the type
//	gpu:2g                               refused: a count with a lower-case unit, or a type? (gpu:2g:1 is the type)
//	gpu:(null):0(IDX:N/A)                untyped, 0 (older Slurm prints the missing type as (null))
//	gpu:h100:no_consume:2                type h100, 2, NoConsume
//	gpu:h100:a100:1   gpu::1   gpu:      refused: two types, an empty type
//	gres/gpu:h100:1   gres:gpu:2         the request spellings of 22.05+ and before: the prefix is dropped
//	(S:0-3) (IDX:0,2-3) (IDX:N/A) (IDX:) kept verbatim in GRES.Detail (Indices and Sockets read them)
//	(CNT:2) or any other detail          refused: it may change what the count means
//	gpu:h100:2(S:0   gpu:h100:2)         refused: unbalanced parentheses
//	gres (as a GRES name)                refused: it would read back as the gres: prefix
//	gpu-[a,c]  gpu-[a-c]  gpu-[3-1]  gpu-[1-2   refused: letters in brackets, backward ranges, unbalanced brackets
//	rack[1-2]-n[01-02]                   several groups expand as a product, left to right (slurm.conf allows it)
//
// Counts are int64 in the TRES's unit; Infinite and NoValue are the only
// negative values a parser returns, so a writer that sends counts to Slurm
// must refuse negative ones (slurmrest does).
package slurmstr
