#!/usr/bin/env bash
# capture.sh: record the Slurm strings internal/slurmstr parses, as the testbed prints them.
# Run it through the use lock, from the repository root:
#   test/testbed/use.sh bash internal/slurmstr/testdata/capture.sh
# It creates an account, a QOS and user heidi's association named strcap*, runs a few GPU jobs of
# different shapes (typed, untyped, per job, per task, multi-node, array, two types, pending),
# records scontrol, sinfo, squeue, sacct, sacctmgr, slurmrestd (v0.0.44 and v0.0.43) and
# slurm_acct_db output under captured/, and removes what it created. captured/*.txt are the raw
# outputs; strings.tsv (kind, source, string) is what the Go tests read. Takes about a minute.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(git -C "$here" rev-parse --show-toplevel)
# shellcheck source=/dev/null
source "$repo/test/testbed/lib.sh"
inr() { "$repo/test/testbed/in-root.sh" "$@"; }
out=$here/captured
mkdir -p "$out"
acct=strcap user=heidi qos=strcap_q

extract_only=false
[[ ${1:-} == --extract ]] && extract_only=true # rebuild strings.tsv from captured/ only

if ! $extract_only; then
	cleanup() {
		inr scancel -A "$acct" >/dev/null 2>&1 || true
		for _ in $(seq 30); do
			[[ -z $(inr squeue -h -A "$acct" -o %i 2>/dev/null) ]] && break
			sleep 1
		done
		inr sacctmgr -i delete user name="$user" account="$acct" >/dev/null 2>&1 || true
		inr sacctmgr -i delete account name="$acct" >/dev/null 2>&1 || true
		inr sacctmgr -i delete qos name="$qos" >/dev/null 2>&1 || true
	}
	cleanup
	trap cleanup EXIT
	
	inr sacctmgr -i add qos name="$qos" GrpTRES=cpu=16,mem=32G,gres/gpu=12,gres/gpu:h100=4,gres/gpu:1g.10gb=7 \
		MaxTRESPerUser=gres/gpu:3g.40gb=2 >/dev/null
	inr sacctmgr -i add account name="$acct" description=capture organization=gpubridge >/dev/null
	inr sacctmgr -i add user name="$user" account="$acct" qos="$qos,normal" defaultqos="$qos" >/dev/null
	
	# Before any job of ours: GresUsed of idle nodes (gpu:h100:0(IDX:N/A)).
	inr scontrol show node -d >"$out/scontrol-show-node-d-idle.txt"
	inr scontrol show partition >"$out/scontrol-show-partition.txt"

	sub() { inr --user "$user" sbatch -A "$acct" --parsable -t 5 -o /dev/null "$@" --wrap 'sleep 120'; }
	sub -J typed -p pool --gres=gpu:h100:2 -c 2 --mem=2G
	sub -J perjob -p pool --gpus=h100:1
	sub -J mig -p pool --gres=gpu:1g.10gb:3
	sub -J pernode -p pool --gpus-per-node=3g.40gb:1
	sub -J untyped -p pool -w gpu-b --gres=gpu:1
	sub -J twotypes -p pool -w gpu-b --gres=gpu:1g.10gb:1,gpu:3g.40gb:1
	sub -J multinode -p pool -N 2 --gres=gpu:1
	sub -J pertask -p pool -n 1 --gpus-per-task=1g.10gb:1 --cpus-per-task=2
	sub -J array -p pool --array=0-1 --gres=gpu:1g.10gb:1
	sub -J pending -p pool --gres=gpu:h100:4
	sub -J gpusuntyped -p pool --gpus=2 --mem=1G
	inr --user "$user" sbatch -A "$acct" --parsable -t 5 -o /dev/null -J done -p pool --gres=gpu:1g.10gb:1 --wrap true
	for _ in $(seq 30); do # until the scheduler has placed what fits
		[[ $(inr squeue -h -A "$acct" -t R -o %i | wc -l) -ge 8 ]] && break
		sleep 1
	done
	sleep 2
	
	inr scontrol show node -d >"$out/scontrol-show-node-d.txt"
	for j in $(inr squeue -h -A "$acct" -o %A | sort -un); do inr scontrol show job -d "$j" || true; done >"$out/scontrol-show-job-d.txt"
	inr sinfo -h -N -o '%N|%G' >"$out/sinfo-G.txt"
	inr sinfo -h -N -O 'NodeList:20,Gres:60,GresUsed:80' >"$out/sinfo-gres-used.txt"
	inr sinfo -h -o '%P|%N' >"$out/sinfo-partition-nodes.txt"
	inr squeue -h -A "$acct" -o '%i|%b|%N|%R' >"$out/squeue-b.txt"
	inr sacctmgr -P -n show qos "$qos" format=Name,GrpTRES,MaxTRESPerUser >"$out/sacctmgr-qos.txt"
	tok=$(tb_mint_jwt root 600)
	rest() { curl -sf -H "X-SLURM-USER-TOKEN: $tok" "http://127.0.0.1:6820$1"; }
	for v in v0.0.44 v0.0.43; do
		rest /slurm/$v/nodes/ | jq -c '.nodes[] | {name, gres, gres_used, tres, tres_used}' >"$out/rest-$v-nodes.txt"
		rest /slurm/$v/jobs/ | jq -c --arg a "$acct" '.jobs[] | select(.account == $a) |
			{name, nodes, tres_req_str, tres_alloc_str, tres_per_node, tres_per_job, tres_per_task,
			 tres_per_socket, gres_detail, tres_bind, tres_freq}' >"$out/rest-$v-jobs.txt"
		rest /slurm/$v/partitions/ | jq -c '.partitions[] | {name, nodes: .nodes.configured, tres: .tres.configured}' >"$out/rest-$v-partitions.txt"
	done
	
	inr scancel -A "$acct"
	for _ in $(seq 30); do
		[[ -z $(inr squeue -h -A "$acct" -o %i) ]] && break
		sleep 1
	done
	sleep 3 # slurmdbd catches up
	inr sacct -n -P -a -A "$acct" -D -o JobID,JobName,NodeList,AllocTRES,ReqTRES >"$out/sacct-tres.txt"
	for v in v0.0.44 v0.0.43; do
		rest "/slurmdb/$v/jobs/?account=$acct" | jq -c '.jobs[] | {name, nodes, tres}' >"$out/rest-$v-dbjobs.txt"
		rest "/slurmdb/$v/qos/$qos" | jq -c '.qos[] | {name, limits}' >"$out/rest-$v-qos.txt"
	done
	db() { inr mariadb -N -B slurm_acct_db -e "$1"; }
	db "SELECT id, type, name FROM tres_table ORDER BY id" >"$out/db-tres_table.txt"
	db "SELECT j.job_name, j.nodelist, j.gres_used, j.tres_alloc, j.tres_req FROM testbed_job_table j WHERE j.account = '$acct' ORDER BY j.id_job" >"$out/db-job_table.txt"
	db "SELECT s.nodelist, s.tres_alloc FROM testbed_step_table s JOIN testbed_job_table j ON s.job_db_inx = j.job_db_inx WHERE j.account = '$acct' ORDER BY s.job_db_inx, s.id_step" >"$out/db-step_table.txt"
	db "SELECT name, grp_tres, max_tres_pu FROM qos_table WHERE name = '$qos'" >"$out/db-qos_table.txt"
fi

# strings.tsv: KIND<TAB>SOURCE<TAB>STRING, one per distinct string.
set +e +o pipefail # a grep that finds nothing is not a failure here
{
	grep -ho '\(CfgTRES\|AllocTRES\|TRES\)=[^ ]*' "$out/scontrol-show-node-d.txt" "$out/scontrol-show-job-d.txt" |
		sed 's/^\([A-Za-z]*\)=/tres\tscontrol \1\t/'
	grep -ho '\(Gres\|GresUsed\)=[^ ]*' "$out/scontrol-show-node-d.txt" "$out/scontrol-show-node-d-idle.txt" | sed 's/^\([A-Za-z]*\)=/gres\tscontrol node \1\t/'
	grep -ho '\(JOB_GRES\|GRES\)=[^ ]*' "$out/scontrol-show-job-d.txt" | sed 's/^\([A-Z_]*\)=/gres\tscontrol job \1\t/'
	grep -ho '\(TresPerNode\|TresPerJob\|TresPerTask\|TresPerSocket\)=[^ ]*' "$out/scontrol-show-job-d.txt" |
		sed 's/^\([A-Za-z]*\)=/trespergres\tscontrol job \1\t/'
	grep -hoE '(^| )(NodeList|Nodes|ReqNodeList|ExcNodeList|BatchHost)=[^ ]*' "$out/scontrol-show-job-d.txt" | sed 's/^ *\([A-Za-z]*\)=/hostlist\tscontrol job \1\t/'
	grep -hoE '(^| )(Nodes|TRES)=[^ ]*' "$out/scontrol-show-partition.txt" | sed 's/^ *Nodes=/hostlist\tscontrol partition Nodes\t/; s/^ *TRES=/tres\tscontrol partition TRES\t/'
	cut -d'|' -f2 "$out/sinfo-G.txt" | sed 's/^/gres\tsinfo %G\t/'
	awk '{print "gres\tsinfo -O Gres\t" $2; print "gres\tsinfo -O GresUsed\t" $3}' "$out/sinfo-gres-used.txt"
	cut -d'|' -f2 "$out/sinfo-partition-nodes.txt" | sed 's/^/hostlist\tsinfo %N\t/'
	cut -d'|' -f2 "$out/squeue-b.txt" | sed 's/^/trespergres\tsqueue %b\t/'
	cut -d'|' -f3 "$out/squeue-b.txt" | sed 's/^/hostlist\tsqueue %N\t/'
	cut -d'|' -f2,3 "$out/sacctmgr-qos.txt" | tr '|' '\n' | sed 's/^/tres\tsacctmgr qos\t/'
	cut -d'|' -f3 "$out/sacct-tres.txt" | sed 's/^/hostlist\tsacct NodeList\t/'
	cut -d'|' -f4,5 "$out/sacct-tres.txt" | tr '|' '\n' | sed 's/^/tres\tsacct AllocTRES\/ReqTRES\t/'
	for v in v0.0.44 v0.0.43; do
		jq -r --arg v "$v" '"gres\tREST \($v) node gres\t\(.gres)", "gres\tREST \($v) node gres_used\t\(.gres_used)",
			"tres\tREST \($v) node tres\t\(.tres)", "tres\tREST \($v) node tres_used\t\(.tres_used)"' "$out/rest-$v-nodes.txt"
		jq -r --arg v "$v" '"tres\tREST \($v) job tres_req_str\t\(.tres_req_str)", "tres\tREST \($v) job tres_alloc_str\t\(.tres_alloc_str)",
			"trespergres\tREST \($v) job tres_per_node\t\(.tres_per_node)", "trespergres\tREST \($v) job tres_per_job\t\(.tres_per_job)",
			"trespergres\tREST \($v) job tres_per_task\t\(.tres_per_task)", "trespergres\tREST \($v) job tres_per_socket\t\(.tres_per_socket)",
			"hostlist\tREST \($v) job nodes\t\(.nodes)", (.gres_detail[]? | "gres\tREST \($v) job gres_detail\t\(.)")' "$out/rest-$v-jobs.txt"
		jq -r --arg v "$v" '"hostlist\tREST \($v) partition nodes\t\(.nodes)", "tres\tREST \($v) partition tres\t\(.tres)"' "$out/rest-$v-partitions.txt"
		jq -r --arg v "$v" '"hostlist\tREST \($v) slurmdb job nodes\t\(.nodes)"' "$out/rest-$v-dbjobs.txt"
	done
	cut -f2 "$out/db-job_table.txt" | sed 's/^/hostlist\tslurm_acct_db job nodelist\t/'
	cut -f3 "$out/db-job_table.txt" | sed 's/^/gres\tslurm_acct_db job gres_used\t/'
	cut -f4,5 "$out/db-job_table.txt" | tr '\t' '\n' | sed 's/^/tresid\tslurm_acct_db job tres_alloc\/tres_req\t/'
	cut -f1 "$out/db-step_table.txt" | sed 's/^/hostlist\tslurm_acct_db step nodelist\t/'
	cut -f2 "$out/db-step_table.txt" | sed 's/^/tresid\tslurm_acct_db step tres_alloc\t/'
	cut -f2,3 "$out/db-qos_table.txt" | tr '\t' '\n' | sed 's/^/tresid\tslurm_acct_db qos grp_tres\/max_tres_pu\t/'
} | awk -F'\t' '$3 != "null" {
	k = $1 FS $3
	if (!(k in src)) { order[++n] = k; src[k] = $2 } else if (index("; " src[k] "; ", "; " $2 "; ") == 0) { src[k] = src[k] "; " $2 }
} END { for (i = 1; i <= n; i++) { split(order[i], f, FS); print f[1] FS src[order[i]] FS f[2] } }' >"$here/strings.tsv"
echo "captured $(wc -l <"$here/strings.tsv") strings into $here/strings.tsv"
