#!/usr/bin/env bash
# cluster2.sh up|down|status
# The testbed's second cluster, testbed2 (etc/slurm-c2.conf, README "The second cluster"): its
# slurmctld (6827), slurmd gpu-c and gpu-d (17011-17012) and slurmrestd (6821), in the running
# root and the same slurmdbd as the first cluster. Started on demand, because a second cluster
# in slurmdbd changes what the first cluster's tools do (`sacctmgr add account X` without
# cluster= then makes an association on both clusters).
# up: starts the daemons (slurmctld registers the cluster in slurmdbd) and waits until both
#   nodes are idle and its slurmrestd answers ping. Idempotent.
# down: stops them and deletes the cluster from slurmdbd (with its associations), so that the
#   first cluster's tests see one cluster again. The controller keeps its state, so that after
#   a later up its job ids go on (a new job never shares an id with a row of the deleted
#   incarnation). A testbed restart throws it all away.
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
tb_require_root

c2_running() {
  local d
  for d in "${TB_DAEMONS2[@]}"; do [[ -n $(tb_daemon_pid "$d") ]] || return 1; done
  tb_rest_ping v0.0.44 6821
}

c2_up() {
  mountpoint -q "$TB_ROOT/proc" || tb_die "the testbed is not up: run make testbed-up first"
  if c2_running && [[ $(tb_node_states 2 | grep -c ' idle$') == "${#TB_NODES2[@]}" ]]; then
    tb_log "cluster $TB_CLUSTER2: already up"
    return 0
  fi
  local t0 deadline
  t0=$(tb_now_us)
  tb_stop_daemon "${TB_DAEMONS2[@]}"
  tb_start_daemon slurmctld-c2
  tb_start_daemon "${TB_NODES2[@]/#/slurmd-}" slurmrestd-c2
  tb_wait_idle 2 slurmctld-c2 "${TB_NODES2[@]}"
  deadline=$((SECONDS + 30))
  until tb_rest_ping v0.0.44 6821; do
    ((SECONDS < deadline)) || { tb_log_tail slurmrestd-c2; tb_die "the second cluster's slurmrestd does not answer ping"; }
    sleep 0.2
  done
  tb_log "cluster $TB_CLUSTER2 up in $(tb_fmt_s $(($(tb_now_us) - t0))) s: nodes ${TB_NODES2[*]}, slurmrestd http://127.0.0.1:6821"
}

c2_down() {
  tb_stop_daemon "${TB_DAEMONS2[@]}"
  if mountpoint -q "$TB_ROOT/proc" && [[ -n $(tb_daemon_pid slurmdbd) ]]; then
    tb_chroot sacctmgr -i delete cluster "$TB_CLUSTER2" >/dev/null 2>&1 || true
  fi
  tb_log "cluster $TB_CLUSTER2: stopped and deleted from slurmdbd"
}

case ${1:-} in
  up) TB_USE_WHAT="cluster2.sh up" tb_use_lock; c2_up ;;
  down) TB_USE_WHAT="cluster2.sh down" tb_use_lock; c2_down ;;
  status)
    for d in "${TB_DAEMONS2[@]}"; do printf '%s pid %s\n' "$d" "$(tb_daemon_pid "$d")"; done
    tb_node_states 2 ;;
  *) echo "usage: $0 up|down|status" >&2; exit 2 ;;
esac
