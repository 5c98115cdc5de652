#!/usr/bin/env bash
# galera.sh up|down|status
# A three-node MariaDB Galera cluster beside the testbed's MariaDB, in the same root (Debian's
# mariadb-server and galera-4, already in the cached root), on loopback ports, each node with its
# own data directory: what a site runs for slurmdbd's and gpubridge's databases when one server
# must not be a single point of failure.
#   node  SQL   gcomm  IST   SST (rsync)
#   1     4306  4567   4568  4444
#   2     4307  4577   4578  4454
#   3     4308  4587   4588  4464
# up: bootstraps node 1 (--wsrep-new-cluster), creates gpubridge's user on it (replicated), then
# joins nodes 2 and 3 (state transfer by rsync) and waits until all three are Synced. Idempotent:
# a cluster already up and synced is left as it is. The testbed's restart (up.sh) throws the root
# away and with it the Galera nodes; run `galera.sh up` (or `make testbed-galera`) again then.
# .testbed/env names the nodes: GPUBRIDGE_GALERA_DSNS, one DSN per node, comma separated, for
# gpubridge's database `gpubridge` on the cluster (ready for `gpubridge migrate`).
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
tb_require_root

GA_NODES=(1 2 3)
ga_port() { echo $((4305 + $1)); }
ga_gcomm() { echo $((4557 + 10 * $1)); }
ga_sst() { echo $((4434 + 10 * $1)); }
ga_data() { echo "/var/lib/mysql-galera/n$1"; }
ga_sock() { echo "/run/mariadbd/galera$1.sock"; }
ga_pidfile() { echo "/run/mariadbd/galera$1.pid"; }
ga_cnf() { echo "/etc/mysql/galera/n$1.cnf"; }
ga_log() { echo "/var/log/mysql/galera$1.log"; }

# ga_sql N SQL: run SQL as root on node N (its socket), tab-separated, no headers.
ga_sql() { tb_chroot mariadb -N -B -uroot --socket="$(ga_sock "$1")" -e "$2"; }

ga_pid() {
  local pid=
  read -r pid 2>/dev/null <"$TB_ROOT$(ga_pidfile "$1")" || true
  pid=${pid//[!0-9]/}
  [[ -n $pid ]] && tb_pid_in_root "$pid" && tb_alive "$pid" && echo "$pid"
  return 0
}

# ga_state N: node N's wsrep_local_state_comment and wsrep_cluster_size ("Synced 3"), or nothing.
ga_state() {
  ga_sql "$1" "SELECT MAX(IF(VARIABLE_NAME='WSREP_LOCAL_STATE_COMMENT', VARIABLE_VALUE, NULL)),
    MAX(IF(VARIABLE_NAME='WSREP_CLUSTER_SIZE', VARIABLE_VALUE, NULL)) FROM information_schema.GLOBAL_STATUS
    WHERE VARIABLE_NAME IN ('WSREP_LOCAL_STATE_COMMENT', 'WSREP_CLUSTER_SIZE')" 2>/dev/null | tr '\t' ' '
}

ga_healthy() {
  local n
  for n in "${GA_NODES[@]}"; do
    [[ -n $(ga_pid "$n") && $(ga_state "$n") == "Synced 3" ]] || return 1
  done
}

ga_write_cnf() {   # ga_write_cnf N
  local n=$1 addrs
  addrs="127.0.0.1:$(ga_gcomm 1),127.0.0.1:$(ga_gcomm 2),127.0.0.1:$(ga_gcomm 3)"
  mkdir -p "$TB_ROOT/etc/mysql/galera"
  cat >"$TB_ROOT$(ga_cnf "$n")" <<EOF
# Galera node $n of the testbed (test/testbed/galera.sh writes this file).
[mysqld]
user=mysql
datadir=$(ga_data "$n")
port=$(ga_port "$n")
bind-address=127.0.0.1
socket=$(ga_sock "$n")
pid-file=$(ga_pidfile "$n")
log-error=$(ga_log "$n")
skip-name-resolve
skip-log-bin
innodb_buffer_pool_size=64M
innodb_log_file_size=48M
innodb_autoinc_lock_mode=2
binlog_format=ROW
default_storage_engine=InnoDB
wsrep_on=ON
wsrep_provider=/usr/lib/galera/libgalera_smm.so
wsrep_cluster_name=gpubridge-testbed-galera
wsrep_cluster_address=gcomm://$addrs
wsrep_node_name=galera$n
wsrep_node_address=127.0.0.1:$(ga_gcomm "$n")
wsrep_provider_options="gmcast.listen_addr=tcp://127.0.0.1:$(ga_gcomm "$n");ist.recv_addr=127.0.0.1:$((1 + $(ga_gcomm "$n")));gcache.size=64M"
wsrep_sst_method=rsync
wsrep_sst_receive_address=127.0.0.1:$(ga_sst "$n")
EOF
}

ga_start() {   # ga_start N [--wsrep-new-cluster]
  local n=$1 pid deadline; shift
  rm -f "$TB_ROOT$(ga_pidfile "$n")"
  tb_spawn "$TB_ROOT$(ga_log "$n").out" mariadbd --defaults-file="$(ga_cnf "$n")" "$@" >/dev/null
  deadline=$((SECONDS + 120))
  until [[ $(ga_state "$n") == Synced* ]]; do
    if ((SECONDS >= deadline)); then
      tail -n 30 "$TB_ROOT$(ga_log "$n")" >&2 || true
      tb_die "galera node $n did not reach Synced within 120 s (log: $TB_ROOT$(ga_log "$n"))"
    fi
    sleep 0.3
  done
  pid=$(ga_pid "$n")
  tb_log "galera node $n synced on port $(ga_port "$n") (pid $pid)"
}

ga_stop() {
  local n pid pids=()
  for n in 3 2 1; do
    pid=$(ga_pid "$n")
    [[ -n $pid ]] || continue
    kill -TERM "$pid" 2>/dev/null || true
    pids+=("$pid")
    tb_wait_gone 60 "$pid" || { kill -KILL "$pid" 2>/dev/null || true; tb_wait_gone 5 "$pid" || true; }
  done
  ((${#pids[@]} == 0)) || tb_log "stopped galera nodes (pids ${pids[*]})"
}

# ga_lock serialises galera.sh up/down among the holders of the testbed's use lock: go test
# runs the packages of one `use.sh go test` at once, and two of them bringing the cluster up
# at the same time removed each other's data directories.
ga_lock() {
  mkdir -p "$TB_STATE"
  exec 7>"$TB_STATE/galera.lock"
  flock -w 600 7 || tb_die "another galera.sh up/down held $TB_STATE/galera.lock for 600 s"
}

ga_up() {
  mountpoint -q "$TB_ROOT/proc" || tb_die "the testbed is not up: run make testbed-up first"
  if ga_healthy; then
    tb_log "galera: already up and synced (ports $(ga_port 1)-$(ga_port 3))"
    return 0
  fi
  local t0=$SECONDS n
  ga_stop
  tb_chroot install -d -o mysql -g mysql -m 0755 /run/mariadbd /var/log/mysql /var/lib/mysql-galera
  for n in "${GA_NODES[@]}"; do
    ga_write_cnf "$n"
    rm -rf "${TB_ROOT:?}$(ga_data "$n")"
    tb_chroot install -d -o mysql -g mysql -m 0750 "$(ga_data "$n")"
  done
  tb_chroot mariadb-install-db --defaults-file="$(ga_cnf 1)" --auth-root-authentication-method=socket \
    --skip-test-db >"$TB_ROOT$(ga_log 1).install" 2>&1 ||
    { tail -n 20 "$TB_ROOT$(ga_log 1).install" >&2; tb_die "mariadb-install-db for galera node 1 failed"; }
  ga_start 1 --wsrep-new-cluster
  # Replicated to the joiners by their state transfer. The same user and password as the
  # testbed's MariaDB, on gpubridge's databases (gpubridge and scratch gpubridge_*).
  ga_sql 1 "CREATE USER IF NOT EXISTS 'gpubridge'@'127.0.0.1' IDENTIFIED BY 'gpubridge';
    GRANT ALL ON \`gpubridge\`.* TO 'gpubridge'@'127.0.0.1';
    GRANT ALL ON \`gpubridge\\_%\`.* TO 'gpubridge'@'127.0.0.1';
    CREATE DATABASE IF NOT EXISTS gpubridge;"
  ga_start 2
  ga_start 3
  tb_log "galera: up in $((SECONDS - t0)) s, 3 nodes synced; env: GPUBRIDGE_GALERA_DSNS in $TB_REPO/.testbed/env"
}

case ${1:-} in
  up)
    TB_USE_WHAT="galera.sh up" tb_use_lock
    ga_lock
    ga_up ;;
  down)
    TB_USE_WHAT="galera.sh down" tb_use_lock
    ga_lock
    ga_stop ;;
  status)
    for n in "${GA_NODES[@]}"; do
      printf 'node %s port %s pid %s state %s\n' "$n" "$(ga_port "$n")" "$(ga_pid "$n")" "$(ga_state "$n")"
    done ;;
  *) echo "usage: $0 up|down|status" >&2; exit 2 ;;
esac
