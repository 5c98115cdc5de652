# shellcheck shell=bash
# Shared functions of the Slurm testbed (sourced by up.sh, down.sh; usable by tests:
#   source test/testbed/lib.sh; tb_mint_jwt alice 600).
# Everything here runs on the host as root. See README.md beside this file.

# The Makefile exports TMPDIR=.testbed/tmp, which need not exist yet.
[[ -d ${TMPDIR:-/tmp} ]] || export TMPDIR=/tmp

# ---- fixed locations (other code depends on these) --------------------------------------
TB_BASE=/var/lib/gpubridge/testbed
TB_ROOT=$TB_BASE/root                 # the debootstrap root (chroot)
TB_STATE=$TB_BASE/state               # pid copies and config hash, outside the root
TB_LOCK=$TB_BASE/lock
TB_USE_LOCK=$TB_BASE/use.lock        # test/testbed/use.sh: one test run, bench or demo at a time
TB_CACHE_DIR=/var/cache/gpubridge     # testbed-<key>.tar.zst, outside any clone
TB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TB_REPO=$(git -C "$TB_DIR" rev-parse --show-toplevel 2>/dev/null || (cd "$TB_DIR/../.." && pwd))

TB_SUITE=sid
TB_CLUSTER=testbed
TB_NODES=(gpu-a gpu-b cpu-a)
# The second cluster (started on demand by cluster2.sh): its own slurmctld, two slurmd nodes and
# slurmrestd, in the same root and the same slurmdbd, configured in /etc/slurm-c2 (SLURM_CONF,
# or -M testbed2 for the clients).
TB_CLUSTER2=testbed2
TB_NODES2=(gpu-c gpu-d)
TB_CONF2=/etc/slurm-c2/slurm.conf
TB_DAEMONS2=(slurmctld-c2 slurmd-gpu-c slurmd-gpu-d slurmrestd-c2)
TB_PORTS=(3306 6819 6817 6820 17001 17002 17003 6827 6821 17011 17012)
TB_USERS=(alice bob carol dave erin frank grace heidi)   # uids 2001..2008
TB_REST_USER=svc-rest                                    # uid 2000
# Packages installed in the root. Changing this list (or tb_build_root) changes the cache key.
# job_submit_lua.so (JobSubmitPlugins=lua) is in slurm-wlm-basic-plugins (26.05.5-1), which
# depends on liblua5.1-0; auth_jwt.so is only in slurm-wlm-jwt-plugin.
TB_PACKAGES=(slurmctld slurmd slurmdbd slurmrestd slurm-client slurm-wlm-basic-plugins
  slurm-wlm-jwt-plugin mariadb-server mariadb-client curl ca-certificates procps jq)
# Daemons in start order; each has a pid file written by itself (or by us for slurmrestd).
TB_DAEMONS=(mariadb slurmdbd slurmctld slurmd-gpu-a slurmd-gpu-b slurmd-cpu-a slurmrestd)
TB_PATH_IN=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

# ---- logging and timing -------------------------------------------------------------------
tb_log() { printf '[testbed] %s\n' "$*"; }
tb_die() { printf '[testbed] ERROR: %s\n' "$*" >&2; exit 1; }
tb_now_us() { local t=${EPOCHREALTIME/./}; printf '%s' "$t"; }
tb_fmt_s() { printf '%d.%02d' $(($1 / 1000000)) $((($1 % 1000000) / 10000)); }
tb_phase() {   # tb_phase NAME: ends the previous phase (printing its time) and starts NAME
  local t; t=$(tb_now_us)
  if [[ -n ${TB_PHASE:-} ]]; then
    printf '[testbed] %-34s %6ss\n' "$TB_PHASE" "$(tb_fmt_s $((t - TB_PHASE_T0)))"
  fi
  TB_PHASE=${1:-}; TB_PHASE_T0=$t
}

tb_require_root() { [[ $(id -u) == 0 ]] || tb_die "must run as root (chroot, mount, mknod)"; }

# Take the testbed lock (fd 9). Daemons are always started with fd 9 closed.
tb_lock() {
  mkdir -p "$TB_BASE" "$TB_STATE"
  exec 9>"$TB_LOCK"
  flock -w 900 9 || tb_die "another up/down holds $TB_LOCK"
}

# Take the use lock (fd 8): held for the whole of a test run, bench or demo (test/testbed/use.sh),
# and by up/down before they stop or restart daemons, so that nothing restarts the testbed under
# a running test. A process whose caller already holds it (GPUBRIDGE_TESTBED_IN_USE set by
# use.sh) does not take it again. Waits up to GPUBRIDGE_TESTBED_WAIT seconds (default 3600).
tb_use_lock() {
  [[ -n ${GPUBRIDGE_TESTBED_IN_USE:-} ]] && return 0
  mkdir -p "$TB_BASE" "$TB_STATE"
  exec 8>"$TB_USE_LOCK"
  if ! flock -n 8; then
    tb_log "waiting for the testbed: another test run, bench or demo holds $TB_USE_LOCK ($(cat "$TB_USE_LOCK.owner" 2>/dev/null || echo unknown))"
    flock -w "${GPUBRIDGE_TESTBED_WAIT:-3600}" 8 || tb_die "the testbed stayed in use for ${GPUBRIDGE_TESTBED_WAIT:-3600} s ($TB_USE_LOCK)"
  fi
  printf 'pid %s, %s, since %s\n' "$$" "${TB_USE_WHAT:-$0}" "$(date -u +%FT%TZ)" >"$TB_USE_LOCK.owner"
  export GPUBRIDGE_TESTBED_IN_USE=$$
}

# ---- mirror -------------------------------------------------------------------------------
# The Debian mirror the host itself uses: first deb URI of the host's release suite in
# /etc/apt/sources.list(.d/*.list|*.sources). Never hard-coded.
tb_mirror_url() {
  local codename f uri=
  codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [[ -f $f ]] || continue
    uri=$(awk -v c="$codename" '$1=="deb" { i=2; if ($2 ~ /^\[/) { while (i<=NF && $i !~ /\]$/) i++; i++ }
                                   if ($(i+1)==c) { print $i; exit } }' "$f")
    [[ -n $uri ]] && break
  done
  if [[ -z $uri ]]; then
    for f in /etc/apt/sources.list.d/*.sources; do
      [[ -f $f ]] || continue
      uri=$(awk -v c="$codename" '
        function flush() { if (types ~ /(^| )deb( |$)/ && enabled != "no" && (" " suites " ") ~ (" " c " ") && uris != "") { split(uris, u, " "); print u[1]; found=1; exit } types=""; suites=""; uris=""; enabled="" }
        /^[ \t]*#/ { next }
        /^[ \t]*$/ { flush(); next }
        { k=tolower($1); sub(/:$/, "", k); v=$0; sub(/^[^:]*:[ \t]*/, "", v)
          if (k=="types") types=v; else if (k=="suites") suites=v; else if (k=="uris") uris=v; else if (k=="enabled") enabled=tolower(v) }
        END { if (!found) flush() }' "$f")
      [[ -n $uri ]] && break
    done
  fi
  [[ -n $uri ]] || tb_die "no Debian mirror for suite '$codename' found in the host's apt sources"
  printf '%s\n' "${uri%/}"
}

# ---- cache key ----------------------------------------------------------------------------
# Short hash of the build recipe: suite, package list, users and the build functions.
tb_cache_key() {
  { echo "$TB_SUITE"; echo "${TB_PACKAGES[*]}"; echo "${TB_USERS[*]} $TB_REST_USER"
    declare -f tb_build_root tb_build_users tb_mount_root; } | sha256sum | cut -c1-12
}
tb_cache_file() { printf '%s/testbed-%s.tar.zst\n' "$TB_CACHE_DIR" "$(tb_cache_key)"; }

# ---- mounts -------------------------------------------------------------------------------
# Mount proc, sysfs, a tmpfs /run and a private tmpfs /dev (with devpts and shm) in root $1.
tb_mount_root() {
  local r=$1
  mountpoint -q "$r/proc" || mount -t proc proc "$r/proc"
  mountpoint -q "$r/sys" || mount -t sysfs -o ro,nosuid,nodev,noexec sysfs "$r/sys"
  mountpoint -q "$r/run" || mount -t tmpfs -o mode=0755,nosuid,nodev,size=256m tmpfs "$r/run"
  mkdir -p "$r/run/lock" && chmod 1777 "$r/run/lock"
  if ! mountpoint -q "$r/dev"; then
    mount -t tmpfs -o mode=0755,nosuid,size=16m tmpfs "$r/dev"
    mknod -m 666 "$r/dev/null" c 1 3; mknod -m 666 "$r/dev/zero" c 1 5
    mknod -m 666 "$r/dev/full" c 1 7; mknod -m 666 "$r/dev/random" c 1 8
    mknod -m 666 "$r/dev/urandom" c 1 9; mknod -m 666 "$r/dev/tty" c 5 0
    ln -s /proc/self/fd "$r/dev/fd"; ln -s /proc/self/fd/0 "$r/dev/stdin"
    ln -s /proc/self/fd/1 "$r/dev/stdout"; ln -s /proc/self/fd/2 "$r/dev/stderr"
    mkdir -m 755 "$r/dev/pts"; mkdir -m 1777 "$r/dev/shm"
    mount -t devpts -o newinstance,ptmxmode=0666,mode=0620,gid=5 devpts "$r/dev/pts"
    ln -s pts/ptmx "$r/dev/ptmx"
    mount -t tmpfs -o mode=1777,nosuid,nodev,size=256m tmpfs "$r/dev/shm"
  fi
}

# Mount points at or under $1 (default: all of TB_BASE), deepest first.
tb_mounts_under() {
  local base=${1:-$TB_BASE}
  awk -v b="$base" '{ p=$5; gsub(/\\040/, " ", p); if (p==b || index(p, b "/")==1) print length(p) "\t" p }' \
    /proc/self/mountinfo | sort -rn | cut -f2-
}

# Unmount everything at or under $1 (default TB_BASE); lazily if a mount stays busy.
tb_umount_all() {
  local base=${1:-$TB_BASE} m pass
  for pass in 1 2 3; do
    mapfile -t _tb_m < <(tb_mounts_under "$base")
    ((${#_tb_m[@]})) || return 0
    for m in "${_tb_m[@]}"; do
      if ((pass < 3)); then umount "$m" 2>/dev/null || true; else umount -l "$m" 2>/dev/null || true; fi
    done
  done
  mapfile -t _tb_m < <(tb_mounts_under "$base")
  ((${#_tb_m[@]} == 0)) || tb_die "cannot unmount: ${_tb_m[*]}"
}

# ---- processes ----------------------------------------------------------------------------
# True if pid $1 is alive and lives in the testbed root (its root directory is TB_ROOT).
# This is how a pid from a pid file is checked before it is signalled: a reused pid of some
# unrelated process is never touched.
tb_pid_in_root() {
  local pid=$1 r
  [[ $pid =~ ^[0-9]+$ ]] || return 1
  r=$(readlink "/proc/$pid/root" 2>/dev/null) || return 1
  [[ $r == "$TB_ROOT" || $r == "$TB_ROOT (deleted)" || $r == "$TB_ROOT/"* ]]
}

# Where daemon $1 writes its own pid file, as seen from the host.
tb_daemon_pidfile() {
  case $1 in
    mariadb) echo "$TB_ROOT/run/mariadbd/mysqld.pid" ;;
    slurmdbd) echo "$TB_ROOT/run/slurmdbd/slurmdbd.pid" ;;
    slurmctld) echo "$TB_ROOT/run/slurmctld/slurmctld.pid" ;;
    slurmctld-c2) echo "$TB_ROOT/run/slurmctld-c2/slurmctld.pid" ;;
    slurmd-*) echo "$TB_ROOT/run/$1.pid" ;;
    slurmrestd) echo "$TB_ROOT/run/slurmrestd.pid" ;;
    slurmrestd-c2) echo "$TB_ROOT/run/slurmrestd-c2.pid" ;;
  esac
}

# The recorded pid of daemon $1 (our copy in TB_STATE, else the daemon's own file); empty if none.
tb_daemon_pid() {
  local f pid
  for f in "$TB_STATE/$1.pid" "$(tb_daemon_pidfile "$1")"; do
    pid=
    read -r pid 2>/dev/null <"$f" || [[ -n $pid ]] || continue
    pid=${pid//[!0-9]/}
    if [[ -n $pid ]] && tb_pid_in_root "$pid"; then echo "$pid"; return 0; fi
  done
  return 0
}

tb_daemon_log() {
  case $1 in
    mariadb) echo "$TB_ROOT/var/log/mysql/error.log" ;;
    slurmd-*) echo "$TB_ROOT/var/log/slurm/$1.log" ;;
    *) echo "$TB_ROOT/var/log/slurm/$1.log" ;;
  esac
}

tb_log_tail() {   # tb_log_tail DAEMON [LINES]
  local f; f=$(tb_daemon_log "$1")
  echo "----- last ${2:-40} lines of $f -----" >&2
  tail -n "${2:-40}" "$f" >&2 2>/dev/null || echo "(no log file)" >&2
  echo "-----" >&2
}

# True if pid $1 exists and is not a zombie (this machine's PID 1 reaps orphans only every
# second or two, so an exited daemon stays a zombie for a while; its sockets are already closed).
tb_alive() {
  local s
  read -r s 2>/dev/null <"/proc/$1/stat" || return 1
  s=${s##*) }
  [[ ${s%% *} != Z ]]
}

# Wait until none of the given pids is alive (up to $1 seconds). Returns 1 on timeout.
tb_wait_gone() {
  local secs=$1; shift
  local deadline=$((SECONDS + secs)) p alive
  while :; do
    alive=0
    for p in "$@"; do tb_alive "$p" && alive=1; done
    ((alive)) || return 0
    ((SECONDS < deadline)) || return 1
    sleep 0.1
  done
}

# Pids of all processes whose root directory is the testbed root (jobs, slurmstepd, in-root
# commands, daemons). Selected by their chroot, never by name.
tb_pids_in_root() {
  find /proc/[0-9]*/root -maxdepth 0 \( -lname "$TB_ROOT" -o -lname "$TB_ROOT/*" \
    -o -lname "$TB_ROOT (deleted)" \) -print 2>/dev/null | awk -F/ -v me="$$" '$3 != me { print $3 }'
}

tb_signal() {   # tb_signal SIG PID...
  local sig=$1 p; shift
  for p in "$@"; do kill "-$sig" "$p" 2>/dev/null || true; done
}

# tb_stop_all [term|kill]: stop every daemon recorded in pid files.
# term (down.sh): SIGTERM in reverse start order (restd, slurmds and ctld together, then dbd,
#   then MariaDB), wait, SIGKILL what remains after 30 s.
# kill (up.sh, which throws the root away and restores it): SIGKILL at once.
# Then end any remaining process living in the root (jobs, slurmstepd). Quiet when nothing runs.
tb_stop_all() {
  local mode=${1:-term} group name pid pids t
  local -a groups=("slurmrestd slurmd-gpu-a slurmd-gpu-b slurmd-cpu-a slurmctld slurmrestd-c2 slurmd-gpu-c slurmd-gpu-d slurmctld-c2"
    "slurmdbd" "mariadb")
  for group in "${groups[@]}"; do
    pids=()
    for name in $group; do
      pid=$(tb_daemon_pid "$name")
      [[ -n $pid ]] && pids+=("$pid")
    done
    ((${#pids[@]})) || continue
    t=$(tb_now_us)
    if [[ $mode == kill ]]; then
      tb_signal KILL "${pids[@]}"
      tb_wait_gone 5 "${pids[@]}" || true
      tb_log "killed $group of an earlier run (pids ${pids[*]})"
      continue
    fi
    tb_signal TERM "${pids[@]}"
    if ! tb_wait_gone 30 "${pids[@]}"; then
      tb_log "$group still running after 30 s, sending SIGKILL"
      tb_signal KILL "${pids[@]}"
      tb_wait_gone 5 "${pids[@]}" || true
    fi
    tb_log "stopped $group (pids ${pids[*]}) in $(tb_fmt_s $(($(tb_now_us) - t))) s"
  done
  mapfile -t pids < <(tb_pids_in_root)
  if ((${#pids[@]})); then
    tb_log "ending ${#pids[@]} leftover process(es) in the root (jobs, slurmstepd): ${pids[*]}"
    [[ $mode == kill ]] && tb_signal KILL "${pids[@]}"
    tb_signal TERM "${pids[@]}"
    tb_wait_gone 5 "${pids[@]}" || { tb_signal KILL "${pids[@]}"; tb_wait_gone 5 "${pids[@]}" || true; }
  fi
  rm -f "$TB_STATE"/*.pid
}

# ---- ports ----------------------------------------------------------------------------------
# True if something LISTENs on TCP port $1 (IPv4 or IPv6).
tb_port_listening() {
  local hex; hex=$(printf '%04X' "$1")
  awk -v p=":$hex" 'FNR>1 && $4=="0A" && substr($2, length($2)-4)==p { f=1 } END { exit !f }' \
    /proc/net/tcp /proc/net/tcp6 2>/dev/null
}
tb_port_timewait() {
  local hex; hex=$(printf '%04X' "$1")
  awk -v p=":$hex" 'FNR>1 && $4=="06" && substr($2, length($2)-4)==p { n++ } END { print n+0 }' \
    /proc/net/tcp /proc/net/tcp6 2>/dev/null
}

# "LISTEN-PORTS TIMEWAIT-COUNT" for the testbed ports, from one pass over /proc/net/tcp{,6}.
tb_ports_status() {
  awk -v ports="${TB_PORTS[*]}" '
    BEGIN { n = split(ports, p, " "); for (i = 1; i <= n; i++) want[sprintf("%04X", p[i])] = p[i] }
    FNR > 1 { split($2, a, ":"); port = a[2]
      if (port in want) { if ($4 == "0A") listen[want[port]] = 1; else if ($4 == "06") tw++ } }
    END { s = ""; for (k in listen) s = s (s == "" ? "" : ",") k; print (s == "" ? "-" : s), tw + 0 }' \
    /proc/net/tcp /proc/net/tcp6 2>/dev/null
}

# Wait until no testbed port has a listener (a foreign one is an error).
tb_wait_ports_free() {
  local deadline=$((SECONDS + 20)) busy tw
  while :; do
    read -r busy tw < <(tb_ports_status)
    [[ $busy == - ]] && break
    if ((SECONDS >= deadline)); then
      ss -ltnp 2>/dev/null | grep -E ":(${busy//,/|})\b" >&2 || true
      tb_die "ports $busy are in use by processes that are not this testbed's; stop them first"
    fi
    sleep 0.2
  done
  ((tw == 0)) || tb_log "$tw connection(s) in TIME_WAIT on testbed ports (harmless: the daemons bind with SO_REUSEADDR)"
}

# Wait until port $2 listens, while daemon $1 (pid $3) is alive; on failure print its log.
tb_wait_listen() {
  local name=$1 port=$2 pid=${3:-} secs=${4:-30} deadline
  deadline=$((SECONDS + secs))
  until tb_port_listening "$port"; do
    if [[ -n $pid ]] && ! tb_alive "$pid"; then
      tb_log_tail "$name"; tb_die "$name exited before listening on port $port"
    fi
    if ((SECONDS >= deadline)); then
      tb_log_tail "$name"; tb_die "$name did not listen on port $port within $secs s"
    fi
    sleep 0.05
  done
}

# ---- running things in the root -------------------------------------------------------------
# tb_chroot CMD...: run as root inside the root with a clean environment (fd 9 closed).
tb_chroot() {
  chroot "$TB_ROOT" /usr/bin/env -i PATH="$TB_PATH_IN" HOME=/root USER=root LOGNAME=root \
    LANG=C.UTF-8 "$@" 9>&-
}

# tb_spawn LOG CMD...: run CMD in the root in a new session, stdio to LOG, the lock fd closed;
# prints the pid of the started process (the same process after setsid, chroot and env exec).
# Every inherited descriptor above 2 is closed first: a daemon that kept one open on the
# testbed lock (fd 9 here, or any fd of a caller that took the lock with `flock FILE cmd`)
# would hold the lock for its whole life and block every later up/down.
tb_spawn() {
  local log=$1; shift
  (
    for fd in /proc/self/fd/*; do
      fd=${fd##*/}
      ((fd > 2)) && eval "exec $fd>&-" 2>/dev/null
    done
    exec setsid chroot "$TB_ROOT" /usr/bin/env -i PATH="$TB_PATH_IN" HOME=/root LANG=C.UTF-8 "$@" \
      </dev/null >>"$log" 2>&1
  ) &
  echo $!
}
tb_record_pid() { echo "$2" >"$TB_STATE/$1.pid"; }

# tb_wait_pidfile NAME [SECS]: wait until daemon NAME's own pid file names a live process in
# the root; record and print that pid.
tb_wait_pidfile() {
  local name=$1 f pid= deadline=$((SECONDS + ${2:-30}))
  f=$(tb_daemon_pidfile "$name")
  while :; do
    pid=
    { read -r pid 2>/dev/null <"$f" || true; } && pid=${pid//[!0-9]/}
    [[ -n $pid ]] && tb_pid_in_root "$pid" && tb_alive "$pid" && break
    ((SECONDS < deadline)) || { tb_log_tail "$name"; tb_die "$name did not start (no live pid in $f)"; }
    sleep 0.05
  done
  tb_record_pid "$name" "$pid"
  echo "$pid"
}

# tb_daemon_port NAME: the TCP port daemon NAME listens on.
tb_daemon_port() {
  case $1 in
    mariadb) echo 3306 ;; slurmdbd) echo 6819 ;; slurmctld) echo 6817 ;; slurmrestd) echo 6820 ;;
    slurmctld-c2) echo 6827 ;; slurmrestd-c2) echo 6821 ;;
    slurmd-*)
      local i
      for i in "${!TB_NODES[@]}"; do
        if [[ slurmd-${TB_NODES[$i]} == "$1" ]]; then echo $((17001 + i)); fi
      done
      for i in "${!TB_NODES2[@]}"; do
        if [[ slurmd-${TB_NODES2[$i]} == "$1" ]]; then echo $((17011 + i)); fi
      done ;;
  esac
}

# tb_in_cluster2 NODE: true if NODE is a node of the second cluster.
tb_in_cluster2() { local n; for n in "${TB_NODES2[@]}"; do [[ $n == "$1" ]] && return 0; done; return 1; }

# tb_start_daemon NAME...: start each daemon of the configured root (the commands up.sh uses),
# then wait until each has its pid file and listens on its port. Names: mariadb slurmdbd
# slurmctld slurmd-<node> slurmrestd, and the second cluster's slurmctld-c2 slurmrestd-c2.
tb_start_daemon() {
  local name pid
  local -a started=()
  for name in "$@"; do
    case $name in
      mariadb)
        pid=$(tb_spawn "$(tb_daemon_log mariadb)" mariadbd --user=mysql --bind-address=127.0.0.1 --port=3306 \
          --socket=/run/mariadbd/mysqld.sock --pid-file=/run/mariadbd/mysqld.pid \
          --log-error=/var/log/mysql/error.log --skip-name-resolve --skip-log-bin \
          --innodb-snapshot-isolation=OFF --innodb-lock-wait-timeout=900 --innodb-buffer-pool-size=256M)
        tb_record_pid mariadb "$pid" ;;
      slurmdbd)
        rm -f "$(tb_daemon_pidfile "$name")"
        tb_spawn "$(tb_daemon_log "$name")" slurmdbd >/dev/null ;;
      slurmctld)
        # -i: start even when a fault test rolled its state files back to a
        # set slurmctld would refuse (node state without job state, no
        # assoc_usage before its first save): it logs what it ignored.
        rm -f "$(tb_daemon_pidfile "$name")"
        tb_spawn "$(tb_daemon_log "$name")" slurmctld -i >/dev/null ;;
      slurmctld-c2)
        rm -f "$(tb_daemon_pidfile "$name")"
        tb_spawn "$(tb_daemon_log "$name")" SLURM_CONF="$TB_CONF2" slurmctld -i >/dev/null ;;
      slurmd-*)
        rm -f "$(tb_daemon_pidfile "$name")"
        if tb_in_cluster2 "${name#slurmd-}"; then
          tb_spawn "$(tb_daemon_log "$name")" SLURM_CONF="$TB_CONF2" slurmd -N "${name#slurmd-}" >/dev/null
        else
          tb_spawn "$(tb_daemon_log "$name")" slurmd -N "${name#slurmd-}" >/dev/null
        fi ;;
      slurmrestd)
        # slurmrestd refuses root and SlurmUser: run as svc-rest. SLURM_JWT=daemon makes auth/jwt
        # its primary auth plugin (without it every request is rejected with 401).
        pid=$(tb_spawn "$(tb_daemon_log slurmrestd)" SLURM_JWT=daemon slurmrestd -u "$TB_REST_USER" -g "$TB_REST_USER" \
          -a rest_auth/jwt 127.0.0.1:6820)
        echo "$pid" >"$(tb_daemon_pidfile slurmrestd)"
        tb_record_pid slurmrestd "$pid" ;;
      slurmrestd-c2)
        pid=$(tb_spawn "$(tb_daemon_log slurmrestd-c2)" SLURM_CONF="$TB_CONF2" SLURM_JWT=daemon slurmrestd \
          -u "$TB_REST_USER" -g "$TB_REST_USER" -a rest_auth/jwt 127.0.0.1:6821)
        echo "$pid" >"$(tb_daemon_pidfile slurmrestd-c2)"
        tb_record_pid slurmrestd-c2 "$pid" ;;
      *) tb_die "tb_start_daemon: unknown daemon $name" ;;
    esac
    started+=("$name")
  done
  for name in "${started[@]}"; do
    case $name in
      mariadb | slurmrestd | slurmrestd-c2) pid=$(tb_daemon_pid "$name") ;;
      *) pid=$(tb_wait_pidfile "$name" 60) ;;
    esac
    tb_wait_listen "$name" "$(tb_daemon_port "$name")" "$pid" 60
  done
}

# tb_stop_daemon [--kill] NAME...: stop daemons of the running testbed by pid file (SIGTERM, then
# SIGKILL after 30 s; with --kill, SIGKILL at once, as a crash would) and wait until they are gone.
tb_stop_daemon() {
  local sig=TERM name pid
  [[ ${1:-} == --kill ]] && { sig=KILL; shift; }
  for name in "$@"; do
    pid=$(tb_daemon_pid "$name")
    [[ -n $pid ]] || continue
    kill -"$sig" "$pid" 2>/dev/null || true
    tb_wait_gone 30 "$pid" || { kill -KILL "$pid" 2>/dev/null || true; tb_wait_gone 5 "$pid" || true; }
    rm -f "$TB_STATE/$name.pid"
    # A zombie leader whose other threads still run can keep accepting: wait for the port too.
    local port deadline=$((SECONDS + 10))
    port=$(tb_daemon_port "$name")
    while tb_port_listening "$port" && ((SECONDS < deadline)); do sleep 0.05; done
    if tb_port_listening "$port"; then tb_die "$name (pid $pid) is gone but port $port still listens"; fi
  done
}

# tb_restart_slurmdbd: restart slurmdbd of the running testbed (SIGTERM by pid file, start,
# wait for its port). slurmdbd rolls usage up at start and then hourly, so a test that moved
# testbed_last_ran_table back uses this to make sreport see older rows.
tb_restart_slurmdbd() {
  tb_stop_daemon slurmdbd
  tb_start_daemon slurmdbd
}

# ---- JWT --------------------------------------------------------------------------------------
tb_b64url() { base64 -w0 | tr '+/' '-_' | tr -d '='; }
# tb_mint_jwt [USER] [LIFESPAN_S]: HS256 token signed with the testbed's jwt_hs256.key.
tb_mint_jwt() {
  local user=${1:-root} life=${2:-3600} now h p key sig
  now=$(date +%s)
  h=$(printf '{"alg":"HS256","typ":"JWT"}' | tb_b64url)
  p=$(printf '{"exp":%d,"iat":%d,"sun":"%s"}' $((now + life)) "$now" "$user" | tb_b64url)
  key=$(od -An -v -tx1 "$TB_ROOT/etc/slurm/jwt_hs256.key" | tr -d ' \n')
  sig=$(printf '%s.%s' "$h" "$p" | openssl dgst -sha256 -mac HMAC -macopt "hexkey:$key" -binary | tb_b64url)
  printf '%s.%s.%s\n' "$h" "$p" "$sig"
}

# tb_rest_ping [VERSION] [PORT]: true if the slurmrestd on PORT (default 6820, the first
# cluster's; 6821 is the second's) answers ping with its controller UP.
tb_rest_ping() {
  local v=${1:-v0.0.44} port=${2:-6820} tok out
  tok=$(tb_mint_jwt root 300) || return 1
  out=$(curl -sS -m 5 -f -H "X-SLURM-USER-NAME: root" -H "X-SLURM-USER-TOKEN: $tok" \
    "http://127.0.0.1:$port/slurm/$v/ping/" 2>/dev/null) || return 1
  [[ $out == *'"UP"'* ]]
}

# "NODE STATE" for each node (unique), from sinfo inside the root: the first cluster's, or with
# argument 2 the second's.
tb_node_states() {
  if [[ ${1:-1} == 2 ]]; then
    tb_chroot env SLURM_CONF="$TB_CONF2" sinfo -h -N -o '%N %T' 2>/dev/null | sort -u
  else
    tb_chroot sinfo -h -N -o '%N %T' 2>/dev/null | sort -u
  fi
}

# tb_wait_idle CLUSTER(1|2) CTLD NODE...: wait (60 s) until the nodes of the cluster are idle.
tb_wait_idle() {
  local c=$1 ctld=$2 n states deadline=$((SECONDS + 60)); shift 2
  until states=$(tb_node_states "$c") && [[ $(grep -c ' idle$' <<<"$states") == "$#" ]]; do
    if ((SECONDS >= deadline)); then
      echo "$states" >&2
      for n in "$@"; do tb_log_tail "slurmd-$n" 10; done
      tb_log_tail "$ctld"
      tb_die "nodes $* did not become idle within 60 s"
    fi
    sleep 0.2
  done
}

# ---- build ----------------------------------------------------------------------------------
# Users inside root $1: alice..heidi (uids 2001..2008, home dirs) and svc-rest (uid 2000).
tb_build_users() {
  local r=$1 i=2001 u
  chroot "$r" /usr/sbin/useradd -m -u 2000 -U -s /usr/sbin/nologin "$TB_REST_USER"
  for u in "${TB_USERS[@]}"; do
    chroot "$r" /usr/sbin/useradd -m -u "$i" -U -s /bin/bash "$u"
    i=$((i + 1))
  done
}

# Build root $1 from nothing: debootstrap minbase sid, then the Slurm and MariaDB packages.
tb_build_root() {
  local r=$1 mirror log=$TB_BASE/build.log
  mirror=$(tb_mirror_url)
  tb_log "debootstrap --variant=minbase $TB_SUITE from $mirror (log: $log)"
  : >"$log"
  debootstrap --variant=minbase --components=main "$TB_SUITE" "$r" "$mirror" >>"$log" 2>&1 ||
    { tail -n 30 "$log" >&2; tb_die "debootstrap failed"; }
  cat >"$r/etc/apt/apt.conf.d/99gpubridge-testbed" <<'EOF'
Acquire::Check-Valid-Until "false";
APT::Install-Recommends "false";
APT::Install-Suggests "false";
Acquire::Languages "none";
Dpkg::Use-Pty "false";
EOF
  echo force-unsafe-io >"$r/etc/dpkg/dpkg.cfg.d/gpubridge-unsafe-io"
  printf '#!/bin/sh\nexit 101\n' >"$r/usr/sbin/policy-rc.d"; chmod 755 "$r/usr/sbin/policy-rc.d"
  tb_mount_root "$r"
  tb_phase "build: apt-get install"
  { chroot "$r" /usr/bin/env -i PATH="$TB_PATH_IN" DEBIAN_FRONTEND=noninteractive apt-get -q update &&
    chroot "$r" /usr/bin/env -i PATH="$TB_PATH_IN" DEBIAN_FRONTEND=noninteractive \
      apt-get -q -y install --no-install-recommends "${TB_PACKAGES[@]}"; } >>"$log" 2>&1 9>&- ||
    { tail -n 30 "$log" >&2; tb_umount_all "$r"; tb_die "apt-get install in the root failed"; }
  tb_build_users "$r"
  chroot "$r" /usr/bin/apt-get clean
  rm -rf "$r"/var/lib/apt/lists/* "$r"/var/cache/apt/*.bin
  tb_umount_all "$r"
}
