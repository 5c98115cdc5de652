#!/usr/bin/env bash
# Stop what up.sh started: SIGTERM by pid file (slurmrestd, slurmds and slurmctld, then
# slurmdbd, then MariaDB), wait, SIGKILL after 30 s; end processes left in the root (jobs,
# slurmstepd); unmount the root's proc, sys, run and dev. The root and the cache stay.
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
tb_require_root
[[ -d $TB_BASE ]] || { tb_log "nothing to stop"; exit 0; }
T0=$(tb_now_us)
TB_USE_WHAT="down.sh" tb_use_lock
tb_lock
tb_stop_all
tb_umount_all "$TB_BASE"
rm -f "$TB_STATE/config.sha"
tb_log "down in $(tb_fmt_s $(($(tb_now_us) - T0))) s (root $TB_ROOT and cache $TB_CACHE_DIR kept)"
