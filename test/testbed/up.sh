#!/usr/bin/env bash
# Bring up the Slurm testbed: MariaDB, slurmdbd, slurmctld, 3 x slurmd, slurmrestd (26.05 from
# Debian sid) in a debootstrap root at /var/lib/gpubridge/testbed/root. Idempotent: returns in
# about a second when everything is already up and healthy with the same configuration.
# Otherwise it clears any earlier run's state (daemons by pid file, leftover processes in the
# root, mounts), restores the root from the cache tarball (or builds it), configures, starts
# and waits until all nodes are idle and REST answers. See README.md beside this file.
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

tb_require_root
FRESH=0
case ${1:-} in
  --fresh) FRESH=1 ;;
  "") ;;
  *) tb_die "usage: up.sh [--fresh]  (--fresh: restart from the cached root even when up and healthy)" ;;
esac
T0=$(tb_now_us)
tb_lock

# ---- configuration (rendered first: its hash decides whether a running testbed is current) ----

# gres.conf is written from this one place: gpu-a's hand-written lines (test/testbed/etc/gres.conf)
# followed by gpu-b's lines as `gpubridge gres generate` renders them from a recorded NVML inventory
# (test/fixtures/gres/testbed-gpu-b.gres.conf; a unit test keeps that file equal to the command's
# output, and TestGresOnTestbed checks that slurmd registers what it declares).
write_gres_conf() {   # write_gres_conf DEST_FILE
  cat "$TB_DIR/etc/gres.conf" "$TB_DIR/../fixtures/gres/testbed-gpu-b.gres.conf" >"$1"
}

# Expand a gres.conf File= value: /dev/x[0-3,5] and comma lists.
expand_files() {
  local spec=$1 cur= ch i depth=0 item pre body post part a b w
  local -a items=() parts=()
  for ((i = 0; i < ${#spec}; i++)); do
    ch=${spec:i:1}
    case $ch in '[') depth=1 ;; ']') depth=0 ;; esac
    if [[ $ch == , && $depth == 0 ]]; then items+=("$cur"); cur=; else cur+=$ch; fi
  done
  items+=("$cur")
  for item in "${items[@]}"; do
    if [[ $item =~ ^([^[]*)\[([^]]*)\](.*)$ ]]; then
      pre=${BASH_REMATCH[1]} body=${BASH_REMATCH[2]} post=${BASH_REMATCH[3]}
      IFS=, read -ra parts <<<"$body"
      for part in "${parts[@]}"; do
        if [[ $part == *-* ]]; then
          a=${part%-*} b=${part#*-} w=${#a}
          for ((i = 10#$a; i <= 10#$b; i++)); do printf '%s%0*d%s\n' "$pre" "$w" "$i" "$post"; done
        else
          printf '%s%s%s\n' "$pre" "$part" "$post"
        fi
      done
    else
      printf '%s\n' "$item"
    fi
  done
}

# Create every File= path of the root's gres.conf as a character device (major 195, minors in
# order of appearance: /dev/fakenv0..3 get 0..3) in the root's private tmpfs /dev.
make_gres_devices() {
  local minor=0 f spec
  # Both clusters' gres.conf, one sequence of minor numbers.
  while read -r spec; do
    while read -r f; do
      [[ $f == /dev/* ]] || tb_die "gres.conf File=$f is not under /dev"
      mkdir -p "$(dirname "$TB_ROOT$f")"
      [[ -e $TB_ROOT$f ]] || mknod -m 666 "$TB_ROOT$f" c 195 "$minor"
      minor=$((minor + 1))
    done < <(expand_files "$spec")
  done < <(sed -e 's/#.*//' "$TB_ROOT/etc/slurm/gres.conf" "$TB_ROOT${TB_CONF2%/*}/gres.conf" | grep -oiE '(^|[[:space:]])File=[^[:space:]]+' | sed -E 's/^[[:space:]]*[Ff][Ii][Ll][Ee]=//')
}

render_configs() {   # render_configs DIR: every file that goes to <root>/etc/slurm
  local d=$1 host js
  host=$(hostname -s)
  if [[ -f $TB_REPO/contrib/job_submit.lua ]]; then
    # job_submit.lua and the files it includes (job_submit_burst.lua: submit-time burst routing).
    cp "$TB_REPO"/contrib/job_submit*.lua "$d/"
    js="JobSubmitPlugins=lua"
  else
    js="# JobSubmitPlugins unset: contrib/job_submit.lua does not exist"
  fi
  sed -e "s/@HOST@/$host/g" -e "s|@JOB_SUBMIT@|$js|" "$TB_DIR/etc/slurm.conf" >"$d/slurm.conf"
  cp "$TB_DIR/etc/slurmdbd.conf" "$TB_DIR/etc/cgroup.conf" "$d/"
  write_gres_conf "$d/gres.conf"
  # The second cluster's directory (TB_CONF2's).
  mkdir -p "$d/c2"
  sed -e "s/@HOST@/$host/g" "$TB_DIR/etc/slurm-c2.conf" >"$d/c2/slurm.conf"
  cp "$TB_DIR/etc/gres-c2.conf" "$d/c2/gres.conf"
  cp "$TB_DIR/etc/cgroup.conf" "$d/c2/"
}

STAGE=$(mktemp -d "$TB_BASE/stage.XXXXXX")
trap 'rm -rf "$STAGE"' EXIT
render_configs "$STAGE"
CACHE_KEY=$(tb_cache_key)
# job_submit.lua's content is not part of the hash (its presence is, via JobSubmitPlugins in
# slurm.conf): a changed script is copied into the running root instead, and slurmctld reloads
# it by itself, so editing it does not restart the testbed (which would empty the databases).
CONFIG_SHA=$( { echo "$CACHE_KEY"; cd "$STAGE" && sha256sum ./*.conf ./c2/*.conf; cd "$TB_DIR" &&
  sha256sum up.sh lib.sh etc/mariadb-init.sql; } | sha256sum | cut -c1-16)

sync_job_submit_lua() {
  local src dst
  for src in "$STAGE"/job_submit*.lua; do
    [[ -f $src ]] || continue
    dst=$TB_ROOT/etc/slurm/${src##*/}
    cmp -s "$src" "$dst" && continue
    cp "$src" "$dst.new" && chmod 0644 "$dst.new" && mv -f "$dst.new" "$dst"
    tb_log "updated $dst from contrib/ (slurmctld reloads job_submit.lua when it changes)"
  done
}

# galera_dsns: gpubridge's database on each node of the Galera cluster that galera.sh starts
# (make testbed-galera), comma separated.
galera_dsns() {
  local n out=
  for n in 1 2 3; do
    out+=${out:+,}"gpubridge:gpubridge@tcp(127.0.0.1:$((4305 + n)))/gpubridge?parseTime=true&loc=UTC"
  done
  printf '%s' "$out"
}

write_env() {
  local envdir=$TB_REPO/.testbed tmp
  mkdir -p "$envdir"
  tmp=$(mktemp "$envdir/env.XXXXXX")
  cat >"$tmp" <<EOF
export GPUBRIDGE_CLUSTER=$TB_CLUSTER
export GPUBRIDGE_SLURMREST_URL=http://127.0.0.1:6820
export GPUBRIDGE_SLURMREST_JWT_KEY=$TB_ROOT/etc/slurm/jwt_hs256.key
export GPUBRIDGE_SLURMREST_USER=root
export GPUBRIDGE_SLURMDB_DSN='gpubridge_ro:gpubridge_ro@tcp(127.0.0.1:3306)/slurm_acct_db?parseTime=true&loc=UTC'
export GPUBRIDGE_DB_DSN='gpubridge:gpubridge@tcp(127.0.0.1:3306)/gpubridge?parseTime=true&loc=UTC'
export GPUBRIDGE_BENCH_SLURMDB_DSN='gpubridge_bench:gpubridge_bench@tcp(127.0.0.1:3306)/slurm_acct_db?parseTime=true&loc=UTC'
export GPUBRIDGE_GUARD_FILE=$TB_ROOT/var/lib/gpubridge/guard/tenants.table
export GPUBRIDGE_TESTBED_ROOT=$TB_ROOT
export GPUBRIDGE_TESTBED_EXEC=$TB_DIR/in-root.sh
export GPUBRIDGE_TESTBED_CLUSTER2=$TB_CLUSTER2
export GPUBRIDGE_TESTBED_CLUSTER2_REST=http://127.0.0.1:6821
export GPUBRIDGE_TESTBED_CLUSTER2_CONF=$TB_CONF2
export GPUBRIDGE_GALERA_DSNS='$(galera_dsns)'
EOF
  chmod 644 "$tmp"
  mv -f "$tmp" "$envdir/env"
}

# ---- already up? ----------------------------------------------------------------------------
healthy() {
  local d states
  [[ -r $TB_STATE/config.sha && $(<"$TB_STATE/config.sha") == "$CONFIG_SHA" ]] || return 1
  for d in "${TB_DAEMONS[@]}"; do [[ -n $(tb_daemon_pid "$d") ]] || return 1; done
  tb_rest_ping v0.0.44 || return 1
  nodes_settled 1 "${#TB_NODES[@]}"
}

# nodes_settled CLUSTER COUNT: the cluster (1 or 2) has COUNT nodes, none down, failed or
# invalid, all responding (within 30 s).
nodes_settled() {
  local i states
  for i in $(seq 30); do
    states=$(tb_node_states "$1") || return 1
    [[ $(wc -l <<<"$states") == "$2" ]] || return 1
    grep -qiE 'down|unk|inval|fail' <<<"$states" && return 1
    # A node just resumed after a test's drain shows `idle*` until its slurmd answers the next
    # ping: wait for it (up to 30 s) rather than restart everybody's testbed.
    grep -qiE '\*|not_responding' <<<"$states" || return 0
    sleep 1
  done
  return 1
}

if ((FRESH == 0)) && healthy; then
  sync_job_submit_lua
  write_env
  tb_log "already up and healthy ($(tb_fmt_s $(($(tb_now_us) - T0))) s); env: $TB_REPO/.testbed/env"
  exit 0
fi

# ---- clear what an earlier run left -----------------------------------------------------------
# Restarting throws the databases away: wait until no test run, bench or demo uses the testbed.
# The use lock is always taken before the up/down lock (use.sh, down.sh), so drop ours first.
if [[ -z ${GPUBRIDGE_TESTBED_IN_USE:-} ]]; then
  exec 9>&-
  TB_USE_WHAT="up.sh (restart)" tb_use_lock
  tb_lock
  if ((FRESH == 0)) && healthy; then   # someone else brought it up while we waited
    sync_job_submit_lua
    write_env
    tb_log "already up and healthy ($(tb_fmt_s $(($(tb_now_us) - T0))) s); env: $TB_REPO/.testbed/env"
    exit 0
  fi
fi
((FRESH == 0)) || tb_log "fresh start requested: restarting from the cached root (accounts, QOS, jobs and databases of earlier runs are dropped)"
tb_phase "clear stale state"
tb_stop_all kill   # the root is thrown away below, nothing needs a clean shutdown
tb_umount_all "$TB_BASE"
rm -f "$TB_STATE"/*.pid "$TB_STATE/config.sha"
for d in "$TB_BASE"/stage.*; do [[ $d == "$STAGE" ]] || rm -rf "$d"; done
tb_wait_ports_free

# ---- root: restore from cache or build ------------------------------------------------------------
CACHE=$(tb_cache_file)
[[ -z $(tb_mounts_under "$TB_BASE") ]] || tb_die "mounts remain under $TB_BASE"
if [[ -f $CACHE ]]; then
  tb_phase "restore root from cache"
  rm -rf --one-file-system "$TB_ROOT"
  mkdir -p "$TB_ROOT"
  zstd -dc -q "$CACHE" | tar --numeric-owner -xpf - -C "$TB_ROOT" ||
    tb_die "restoring $CACHE failed (delete it to rebuild)"
else
  tb_phase "build: debootstrap"
  rm -rf --one-file-system "$TB_ROOT"
  mkdir -p "$TB_ROOT" "$TB_CACHE_DIR"
  tb_build_root "$TB_ROOT"
  tb_phase "build: cache tarball"
  tar --numeric-owner --one-file-system -C "$TB_ROOT" -cf - . | zstd -T0 -3 -q -o "$CACHE.tmp.$$"
  mv -f "$CACHE.tmp.$$" "$CACHE"
  find "$TB_CACHE_DIR" -maxdepth 1 -name 'testbed-*.tar.zst*' ! -name "${CACHE##*/}" -delete
  tb_log "cached $(du -h "$CACHE" | cut -f1) at $CACHE"
fi

# ---- configure ------------------------------------------------------------------------------------
tb_phase "configure"
tb_mount_root "$TB_ROOT"
R=$TB_ROOT
host=$(hostname -s)
printf '127.0.0.1\tlocalhost %s\n::1\tip6-localhost ip6-loopback\n' "$host" >"$R/etc/hosts"
echo "$host" >"$R/etc/hostname"
C2=$R${TB_CONF2%/*}
install -d -m 0755 "$R/etc/slurm" "$C2" "$R/var/spool/slurmd"
for n in "${TB_NODES[@]}" "${TB_NODES2[@]}"; do install -d -m 0755 "$R/var/spool/slurmd/$n"; done
find "$STAGE" -maxdepth 1 -type f -exec cp {} "$R/etc/slurm/" \;
cp "$STAGE"/c2/* "$C2/"
[[ -s $R/etc/slurm/slurm.key ]] || head -c 1024 /dev/urandom >"$R/etc/slurm/slurm.key"
[[ -s $R/etc/slurm/jwt_hs256.key ]] || head -c 32 /dev/urandom >"$R/etc/slurm/jwt_hs256.key"
cp "$R/etc/slurm/slurm.key" "$C2/slurm.key"   # one key: slurmdbd authenticates both controllers
C2IN=${TB_CONF2%/*}
tb_chroot sh -ec '
  chown slurm:slurm /etc/slurm/slurm.key /etc/slurm/jwt_hs256.key /etc/slurm/slurmdbd.conf '"$C2IN"'/slurm.key
  chmod 0600 /etc/slurm/slurm.key /etc/slurm/jwt_hs256.key /etc/slurm/slurmdbd.conf '"$C2IN"'/slurm.key
  chmod 0644 /etc/slurm/slurm.conf /etc/slurm/gres.conf /etc/slurm/cgroup.conf '"$C2IN"'/slurm.conf '"$C2IN"'/gres.conf '"$C2IN"'/cgroup.conf
  install -d -o slurm -g slurm -m 0755 /var/spool/slurmctld-c2 /run/slurmctld-c2
  [ ! -e /etc/slurm/job_submit.lua ] || chmod 0644 /etc/slurm/job_submit.lua
  install -d -o slurm -g slurm -m 0755 /var/spool/slurmctld /var/log/slurm /run/slurmctld /run/slurmdbd
  install -d -o mysql -g mysql -m 0755 /run/mariadbd /var/log/mysql
  chmod 1777 /tmp'
make_gres_devices

# ---- start ----------------------------------------------------------------------------------------
tb_phase "start mariadb"
tb_start_daemon mariadb
tb_chroot mariadb --socket=/run/mariadbd/mysqld.sock -uroot <"$TB_DIR/etc/mariadb-init.sql" ||
  { tb_log_tail mariadb; tb_die "creating databases and users failed"; }

tb_phase "start slurmdbd"
tb_start_daemon slurmdbd

tb_phase "start slurmctld"
tb_start_daemon slurmctld

tb_phase "start slurmd x3, slurmrestd"
tb_start_daemon "${TB_NODES[@]/#/slurmd-}" slurmrestd

tb_phase "wait: nodes idle, REST ping"
tb_wait_idle 1 slurmctld "${TB_NODES[@]}"
deadline=$((SECONDS + 30))
until tb_rest_ping v0.0.44 && tb_rest_ping v0.0.43; do
  ((SECONDS < deadline)) || { tb_log_tail slurmrestd; tb_die "slurmrestd does not answer ping (v0.0.44/v0.0.43)"; }
  sleep 0.2
done

echo "$CONFIG_SHA" >"$TB_STATE/config.sha"
write_env
tb_phase ""
tb_log "up in $(tb_fmt_s $(($(tb_now_us) - T0))) s: cluster $TB_CLUSTER, nodes ${TB_NODES[*]}; env: $TB_REPO/.testbed/env"
