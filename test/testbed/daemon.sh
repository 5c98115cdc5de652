#!/usr/bin/env bash
# daemon.sh stop|kill|start|restart NAME...
# Stop (SIGTERM), kill (SIGKILL, as a crash), start or restart single daemons of the running
# testbed, for fault tests: mariadb slurmdbd slurmctld slurmrestd slurmd-gpu-a slurmd-gpu-b
# slurmd-cpu-a, and the second cluster's slurmctld-c2 slurmrestd-c2 slurmd-gpu-c slurmd-gpu-d.
# Run it inside a test run (test/testbed/use.sh holds the testbed); the next `up.sh` restarts
# everything from the cache if a daemon was left stopped.
# Example: test/testbed/daemon.sh kill slurmrestd; ...; test/testbed/daemon.sh start slurmrestd
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
tb_require_root
(($# >= 2)) || { echo "usage: $0 stop|kill|start|restart NAME..." >&2; exit 2; }
op=$1; shift
for n in "$@"; do
  [[ -n $(tb_daemon_port "$n") ]] || tb_die "unknown daemon $n (one of ${TB_DAEMONS[*]})"
done
case $op in
  stop) tb_stop_daemon "$@" ;;
  kill) tb_stop_daemon --kill "$@" ;;
  start) tb_start_daemon "$@" ;;
  restart) tb_stop_daemon "$@"; tb_start_daemon "$@" ;;
  *) echo "usage: $0 stop|kill|start|restart NAME..." >&2; exit 2 ;;
esac
tb_log "$op $*: done"
