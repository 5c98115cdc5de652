#!/usr/bin/env bash
# jobrows.sh add ID ACCOUNT USER START END GPUS [PARTITION [QOS [STATE]]]
# jobrows.sh delete
#
# A document's example whose figures must be exact (a real job's seconds vary
# from run to run) bills job runs written here into the testbed's slurmdbd
# job table, as slurmdbd records a finished run: job id 902900000 + ID (the
# documents' block of test/bench/synth's test ids), an account starting with
# m4syn (the synthetic accounts; it and USER's association must exist in
# Slurm: a tenant of the document), START and END as RFC 3339 times, GPUS as
# TYPE:N[,TYPE:N] (gpu:N for untyped GPUs), PARTITION pool, QOS normal and
# STATE completed unless given (completed, cancelled, failed, node_fail).
# Keep them in past months: slurmdbd rolls up only hours since its last
# rollup, so no rollup ever counts them and their removal leaves no gap
# for ingest's purge check. `delete` removes every row of the block.
# Needs GPUBRIDGE_BENCH_SLURMDB_DSN, GPUBRIDGE_CLUSTER and
# GPUBRIDGE_TESTBED_EXEC (.testbed/env).
set -euo pipefail
lo=902900000 hi=903000000
dsn=${GPUBRIDGE_BENCH_SLURMDB_DSN:?source .testbed/env}
cluster=${GPUBRIDGE_CLUSTER:?source .testbed/env}
# user:password@tcp(host:port)/database?...
re='^([^:]+):([^@]*)@tcp\(([^:]+):([0-9]+)\)/([^?]+)'
[[ $dsn =~ $re ]] || { echo "jobrows.sh: cannot read GPUBRIDGE_BENCH_SLURMDB_DSN" >&2; exit 2; }
db=("${BASH_REMATCH[@]}")
sql() {
  "${GPUBRIDGE_TESTBED_EXEC:?source .testbed/env}" mysql -N -B -h"${db[3]}" -P"${db[4]}" -u"${db[1]}" -p"${db[2]}" "${db[5]}" -e "$1"
}
one() { # one SQL: the single value it selects, or an error naming what
  local v
  v=$(sql "$1")
  [[ -n $v ]] || { echo "jobrows.sh: no $2" >&2; exit 1; }
  echo "$v"
}
case ${1:-} in
delete)
  sql "DELETE FROM \`${cluster}_job_table\` WHERE id_job >= $lo AND id_job < $hi AND account LIKE 'm4syn%'"
  ;;
add)
  (($# >= 7)) || { echo "usage: jobrows.sh add ID ACCOUNT USER START END GPUS [PARTITION [QOS [STATE]]]" >&2; exit 2; }
  id=$(($lo + $2)) acct=$3 user=$4 part=${8:-pool} qos=${9:-normal}
  [[ $acct == m4syn* && $2 -ge 0 && $id -lt $hi ]] || { echo "jobrows.sh: id $2 or account $acct outside the documents' block" >&2; exit 2; }
  start=$(date -ud "$5" +%s) end=$(date -ud "$6" +%s)
  case ${10:-completed} in
  completed) state=3 ;; cancelled) state=4 ;; failed) state=5 ;; node_fail) state=7 ;;
  *) echo "jobrows.sh: state ${10}: completed, cancelled, failed or node_fail" >&2; exit 2 ;;
  esac
  assoc=$(one "SELECT id_assoc FROM \`${cluster}_assoc_table\` WHERE acct = '$acct' AND user = '$user' AND deleted = 0" "association $acct/$user")
  qosid=$(one "SELECT id FROM qos_table WHERE name = '$qos' AND deleted = 0" "QOS $qos")
  uid=$("$GPUBRIDGE_TESTBED_EXEC" id -u "$user")
  # tres_alloc as slurmdbd writes it: cpu, mem, energy, node, billing, then
  # gres/gpu (every GPU) and the typed GPUs, ids ascending.
  total=0 typed=()
  IFS=, read -ra parts <<<"$7"
  for p in "${parts[@]}"; do
    typ=${p%:*} n=${p##*:}
    total=$((total + n))
    if [[ $typ != gpu ]]; then
      typed+=("$(one "SELECT id FROM tres_table WHERE type = 'gres' AND name = 'gpu:$typ'" "GPU type $typ")=$n")
    fi
  done
  tres="1=4,2=4000,3=18446744073709551614,4=1,5=4,$(one "SELECT id FROM tres_table WHERE type = 'gres' AND name = 'gpu'" "gres/gpu")=$total"
  for x in $(printf '%s\n' "${typed[@]}" | sort -n); do tres+=",$x"; done
  sql "INSERT INTO \`${cluster}_job_table\` (id_job, time_submit, time_eligible, time_start, time_end, account, \`partition\`, id_qos,
    id_assoc, id_user, id_group, state, tres_alloc, tres_req, job_name, cpus_req, id_resv, id_wckey, het_job_id, het_job_offset,
    state_reason_prev, nodes_alloc, priority, mod_time)
    VALUES ($id, $((start - 60)), $((start - 60)), $start, $end, '$acct', '$part', $qosid, $assoc, $uid, $uid, $state, '$tres', '$tres',
    'doc', 1, 0, 0, 0, 4294967294, 0, 1, 1, $end)"
  ;;
*)
  echo "usage: jobrows.sh add ID ACCOUNT USER START END GPUS [PARTITION [QOS [STATE]]] | delete" >&2
  exit 2
  ;;
esac
