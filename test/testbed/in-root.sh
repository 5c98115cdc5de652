#!/usr/bin/env bash
# in-root.sh [--user NAME] CMD ARGS...
# Run CMD inside the Slurm testbed root (chroot), as root or as NAME (setpriv, with NAME's
# groups, HOME, USER), with a clean environment (PATH, HOME, USER, LOGNAME, LANG, and TZ
# when set), cwd /tmp. stdin, stdout, stderr and the exit code pass through. For other
# variables: in-root.sh env SLURM_TIME_FORMAT=standard sacct ...
# Examples:
#   test/testbed/in-root.sh sacctmgr -i -P list qos
#   test/testbed/in-root.sh --user alice sbatch -A acme --gres=gpu:h100:1 --wrap 'sleep 5'
#   test/testbed/in-root.sh sinfo -M testbed2          # the second cluster (or SLURM_CONF:)
#   test/testbed/in-root.sh env SLURM_CONF=/etc/slurm-c2/slurm.conf squeue
set -euo pipefail
ROOT=/var/lib/gpubridge/testbed/root
PATH_IN=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
usage() { echo "usage: $0 [--user NAME] CMD [ARGS...]" >&2; exit 2; }
user=
while (($#)); do
  case $1 in
    --user) (($# >= 2)) || usage; user=$2; shift 2 ;;
    --user=*) user=${1#--user=}; shift ;;
    -h|--help) usage ;;
    --) shift; break ;;
    *) break ;;
  esac
done
(($#)) || usage
[[ $(id -u) == 0 ]] || { echo "in-root.sh: must run as root (chroot)" >&2; exit 2; }
mountpoint -q "$ROOT/proc" || { echo "in-root.sh: the testbed is not up ($ROOT/proc not mounted); run make testbed-up" >&2; exit 2; }
envs=(PATH="$PATH_IN" LANG=C.UTF-8)
[[ -n ${TZ:-} ]] && envs+=(TZ="$TZ")
if [[ -z $user || $user == root ]]; then
  exec chroot "$ROOT" /usr/bin/env -i -C /tmp "${envs[@]}" HOME=/root USER=root LOGNAME=root "$@"
fi
home=$(awk -F: -v u="$user" '$1==u { print $6; f=1 } END { exit !f }' "$ROOT/etc/passwd") ||
  { echo "in-root.sh: no user '$user' in the testbed root" >&2; exit 2; }
exec chroot "$ROOT" /usr/bin/setpriv --reuid="$user" --regid="$user" --init-groups -- \
  /usr/bin/env -i -C /tmp "${envs[@]}" HOME="$home" USER="$user" LOGNAME="$user" "$@"
