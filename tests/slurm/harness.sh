#!/usr/bin/env bash
# A real single-host Slurm 22.05 cluster under a temporary directory, for the live-mode tests.
#
#   harness.sh start DIR [NODES] [GPUS]   munged + slurmctld + NODES slurmd (-N nodeK), waits idle
#   harness.sh stop DIR                   stops every daemon it started in DIR (pid files only)
#   harness.sh restart-ctld DIR [GAP]     stop slurmctld, wait GAP s, start it (state kept in DIR/ctld)
#   harness.sh stop-node|start-node DIR nodeK
#   harness.sh env DIR                    prints `export SLURM_CONF=...`
#
# Accounting (opt-in: MariaDB and slurmdbd take a start from about 3 s to 10-30 s): with
# ORRERY_SLURM_DBD=1, or ORRERY_SLURM_ACCOUNTS=FILE, `start` also runs a MariaDB server
# (mariadb-install-db'd datadir, socket and a random 127.0.0.1 port in DIR/db, no system
# service) and slurmdbd (DIR/etc/slurmdbd.conf, accounting_storage/mysql), points slurm.conf at
# it (AccountingStorageEnforce=associations,limits,qos) and creates the cluster. FILE, a sacctmgr
# listing as `--policy slurm:accounts=FILE` reads it (docs/formats/sacctmgr.md), is loaded with
# sacctmgr -i (sacctmgr-load.awk): its QOS, accounts and user associations, so that fair share,
# associations and QOS limits are Slurm's own. Its users that have no Unix account get one
# (useradd --system, no home); `stop` deletes those again (DIR/etc/created-users), so two
# harnesses loading the same user names must not overlap (the tests hold a lock).
# ORRERY_SLURM_SCHED_CONF=FILE: the scheduling configuration of slurm.conf is FILE's, entirely:
# its Priority*, Scheduler*, Preempt* and Fairshare* lines replace the harness's own
# SchedulerType/SchedulerParameters (a FILE without them is Slurm's defaults); its nodes and
# partitions are not used (the harness's are). `orrery replay --native` gives the simulator
# DIR/etc/slurm.conf itself, so both read one configuration.
#
# Everything (keys, sockets, pid files, spool, state, logs, dummy GPU device files) lives in
# DIR; ports are chosen at random in 20000-59999. Needs root (SlurmUser=root) and the Debian
# packages slurmctld, slurmd, slurm-client, munge. Power saving is configured: SuspendProgram
# stops the node's slurmd, ResumeProgram starts it again, unless DIR/fail-resume-<node> exists
# (a resume that fails: the node then misses ResumeTimeout and goes DOWN).
set -euo pipefail

cmd=${1:?usage: harness.sh start|stop|restart-ctld|env DIR [NODES] [GPUS]}
dir=${2:?missing DIR}
dir=$(cd "$dir" && pwd)
conf=$dir/etc/slurm.conf
export SLURM_CONF=$conf
export PATH=$PATH:/usr/sbin:/sbin

log() { echo "harness: $*" >&2; }

stop_pidfile() {  # stops the process named in a pid file we wrote, waits for it
  local f=$1 pid
  [[ -f $f ]] || return 0
  pid=$(cat "$f" 2>/dev/null || true)
  if [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$f"
}

start_ctld() {
  slurmctld -f "$conf" -i -L "$dir/log/slurmctld.log" >>"$dir/log/slurmctld.out" 2>&1
  for _ in $(seq 100); do
    scontrol ping 2>/dev/null | grep -q UP && return 0
    sleep 0.1
  done
  log "slurmctld did not answer; log tail:"; tail -20 "$dir/log/slurmctld.log" >&2; return 1
}

start_node() {  # start_node nodeK
  slurmd -N "$1" -f "$conf" -L "$dir/log/slurmd-$1.log" >>"$dir/log/slurmd-$1.out" 2>&1
}

# The scheduling lines of a site's slurm.conf (continuations joined, comments dropped): every
# line whose first key starts with Priority, Scheduler, Preempt or Fairshare.
sched_conf_lines() {
  [[ -r $1 ]] || { log "ORRERY_SLURM_SCHED_CONF: cannot read $1"; exit 2; }
  sed -e ':a' -e '/\\$/N; s/\\\n//; ta' "$1" | sed -e 's/[[:space:]]*#.*$//' |
    grep -iE '^[[:space:]]*(Priority|Scheduler|Preempt|Fairshare)[A-Za-z]*=' || true
}

# MariaDB (its own datadir, socket and port under DIR/db; grant tables off: it listens on
# 127.0.0.1 only, for this slurmdbd) and slurmdbd on port BASE+99; waits until sacctmgr answers.
start_dbd() {
  local base=$1 dbport=$(($1 + 98))
  for b in mariadbd mariadb-install-db slurmdbd sacctmgr; do
    command -v "$b" >/dev/null || { log "missing $b (install mariadb-server slurmdbd slurm-wlm-mysql-plugin)"; exit 2; }
  done
  mkdir -p "$dir/db"
  mariadb-install-db --no-defaults --datadir="$dir/db/data" --user=root --skip-test-db \
    --auth-root-authentication-method=normal >"$dir/log/mariadb-install.log" 2>&1 ||
    { log "mariadb-install-db failed:"; tail -5 "$dir/log/mariadb-install.log" >&2; exit 1; }
  (mariadbd --no-defaults --datadir="$dir/db/data" --socket="$dir/db/mysql.sock" --port="$dbport" \
    --bind-address=127.0.0.1 --pid-file="$dir/db/mariadb.pid" --log-error="$dir/log/mariadb.log" --user=root \
    --skip-grant-tables --skip-log-bin --innodb-buffer-pool-size=64M --innodb-log-file-size=16M \
    </dev/null >/dev/null 2>&1 &)
  for _ in $(seq 100); do [[ -S $dir/db/mysql.sock && -f $dir/db/mariadb.pid ]] && break; sleep 0.1; done
  cat >"$dir/etc/slurmdbd.conf" <<CONF
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.sock
DbdHost=localhost
DbdPort=$(($1 + 99))
SlurmUser=root
PidFile=$dir/run/slurmdbd.pid
LogFile=$dir/log/slurmdbd.log
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$dbport
StorageUser=root
StorageLoc=slurm_acct_db
CONF
  chmod 600 "$dir/etc/slurmdbd.conf"
  # slurmdbd finds slurmdbd.conf beside $SLURM_CONF.
  slurmdbd >>"$dir/log/slurmdbd.out" 2>&1
  for _ in $(seq 300); do
    timeout 5 sacctmgr -n -P list cluster >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  log "slurmdbd did not answer; log tail:"; tail -10 "$dir/log/slurmdbd.log" >&2; exit 1
}

# sacctmgr -i, failing loudly.
dbd() { sacctmgr -i "$@" >>"$dir/log/sacctmgr.log" 2>&1 || { log "sacctmgr $* failed:"; tail -3 "$dir/log/sacctmgr.log" >&2; exit 1; }; }

# FILE's QOS, accounts and users (sacctmgr-load.awk).
load_accounts() {
  local file=$1 kind u
  [[ -n $file ]] || return 0
  # Its users' jobs run from DIR/spool (a mkdtemp DIR is 0700).
  chmod 755 "$dir" "$dir/spool"
  for _ in $(seq 100); do sacctmgr -n -P show tres 2>/dev/null | grep -q '^gres|gpu|' && break; sleep 0.1; done
  local cmds
  cmds=$(awk -f "$(dirname "${BASH_SOURCE[0]}")/sacctmgr-load.awk" "$file") || exit 2
  for kind in qos qosset account user; do
    while IFS=$'\t' read -r -a f; do
      [[ ${f[0]:-} == "$kind" ]] || continue
      case $kind in
      qos) dbd add qos "${f[1]}" ;;
      qosset) dbd modify qos where name="${f[1]}" set "${f[@]:2}" ;;
      account) dbd add account "${f[1]}" cluster=orrery "${f[@]:2}" ;;
      user)
        u=${f[1]}
        if ! getent passwd "$u" >/dev/null; then
          useradd --system --no-create-home --shell /usr/sbin/nologin "$u" && echo "$u" >>"$dir/etc/created-users"
        fi
        if [[ $u == root && ${f[2]} == root ]]; then
          [[ ${#f[@]} -gt 3 ]] && dbd modify user where name=root account=root cluster=orrery set "${f[@]:3}"
        else
          dbd add user "$u" account="${f[2]}" cluster=orrery "${f[@]:3}"
        fi ;;
      esac
    done <<<"$cmds"
  done
  log "accounts of $file loaded into slurmdbd"
}

case $cmd in
start)
  nodes=${3:-3}
  gpus=${4:-8}
  for b in munged slurmctld slurmd squeue; do
    command -v "$b" >/dev/null || { log "missing $b (install slurmctld slurmd slurm-client munge)"; exit 2; }
  done
  mkdir -p "$dir"/{etc,munge,ctld,spool,log,dev,run}
  chmod 700 "$dir/munge"
  dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
  chmod 400 "$dir/munge/munge.key"
  munged --force --socket="$dir/munge/munge.sock" --key-file="$dir/munge/munge.key" \
    --pid-file="$dir/munge/munged.pid" --log-file="$dir/log/munged.log" --seed-file="$dir/munge/seed"
  # Dummy GPU devices: character devices (1,3) like /dev/null, which slurmd accepts.
  for i in $(seq 0 $((gpus - 1))); do mknod "$dir/dev/gpu$i" c 1 3 2>/dev/null || ln -sf /dev/null "$dir/dev/gpu$i"; done
  base=$((20000 + RANDOM % 40000))
  # Event-triggered scheduling without Slurm's default 3-s batch_sched_delay (and the
  # minimum interval between attempts): a released job starts in the same second
  # (docs/validation/live.md §I, `orrery replay`). ORRERY_SLURM_SCHED_PARAMS="" = Slurm's defaults.
  sched_params=${ORRERY_SLURM_SCHED_PARAMS-batch_sched_delay=0,sched_min_interval=0}
  sched_lines="SchedulerType=sched/builtin
${sched_params:+SchedulerParameters=$sched_params}"
  [[ -n ${ORRERY_SLURM_SCHED_CONF:-} ]] && sched_lines=$(sched_conf_lines "$ORRERY_SLURM_SCHED_CONF")
  accounting_lines="AccountingStorageType=accounting_storage/none"
  if [[ -n ${ORRERY_SLURM_DBD:-} || -n ${ORRERY_SLURM_ACCOUNTS:-} ]]; then
    accounting_lines="AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
AccountingStoragePort=$((base + 99))
AccountingStorageEnforce=associations,limits,qos
AccountingStorageTRES=gres/gpu
AccountingStoragePass=$dir/munge/munge.sock"
  fi
  cat >"$conf" <<CONF
ClusterName=orrery
SlurmctldHost=localhost
SlurmctldPort=$base
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.sock
CredType=cred/munge
StateSaveLocation=$dir/ctld
SlurmdSpoolDir=$dir/spool/%n
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd-%n.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
GresTypes=gpu
JobCompType=jobcomp/filetxt
JobCompLoc=$dir/jobcomp.txt
JobAcctGatherType=jobacct_gather/none
$accounting_lines
$sched_lines
MpiDefault=none
ReturnToService=2
SlurmdTimeout=20
InactiveLimit=0
MinJobAge=600
KillWait=2
MessageTimeout=5
JobRequeue=1
SuspendProgram=$dir/etc/suspend.sh
ResumeProgram=$dir/etc/resume.sh
SuspendTime=86400
SuspendTimeout=5
ResumeTimeout=15
SuspendRate=0
ResumeRate=0
CONF
  nodelist=""
  for k in $(seq 1 "$nodes"); do
    echo "NodeName=node$k NodeHostname=localhost Port=$((base + k)) CPUs=16 RealMemory=16000 Gres=gpu:$gpus State=UNKNOWN" >>"$conf"
    nodelist+="${nodelist:+,}node$k"
  done
  echo "PartitionName=gpu Nodes=$nodelist Default=YES MaxTime=INFINITE State=UP" >>"$conf"
  # ORRERY_SLURM_EXTRA_PARTITIONS="cpu ...": more partitions over the same nodes (the
  # evaluation test's CPU partition for metric jobs).
  for p in ${ORRERY_SLURM_EXTRA_PARTITIONS:-}; do
    echo "PartitionName=$p Nodes=$nodelist Default=NO MaxTime=INFINITE State=UP" >>"$conf"
    echo "$p" >>"$dir/etc/extra-partitions"
  done
  {
    echo "AutoDetect=off"
    echo "Name=gpu File=$dir/dev/gpu[0-$((gpus - 1))]"
  } >"$dir/etc/gres.conf"
  slurmd_bin=$(command -v slurmd)
  cat >"$dir/etc/suspend.sh" <<SH
#!/bin/bash
export SLURM_CONF=$conf PATH=/usr/sbin:/usr/bin:/sbin:/bin
for n in \$(scontrol show hostnames "\$1"); do
  f=$dir/run/slurmd-\$n.pid
  [[ -f \$f ]] && kill -TERM "\$(cat \$f)" 2>/dev/null
  echo "\$(date +%s) suspend \$n" >>$dir/log/power.log
done
exit 0
SH
  cat >"$dir/etc/resume.sh" <<SH
#!/bin/bash
export SLURM_CONF=$conf PATH=/usr/sbin:/usr/bin:/sbin:/bin
for n in \$(scontrol show hostnames "\$1"); do
  if [[ -e $dir/fail-resume-\$n ]]; then echo "\$(date +%s) resume-fail \$n" >>$dir/log/power.log; continue; fi
  # A resumed node must report a boot time after the resume request (else slurmctld waits for
  # a "reboot" until ResumeTimeout): run slurmd in a time namespace whose uptime starts at 0.
  # slurmctld compares whole seconds: wait so that (now - uptime) is past the request.
  sleep 2
  up=\$(cut -d. -f1 /proc/uptime)
  # slurmctld runs this script with most signals blocked (SigBlk 0x887a27 on 22.05), and a blocked
  # mask survives exec: a slurmd started with it registers but fails every batch launch ("launch
  # failed requeued held"). perl (perl-base, essential) clears the mask before exec.
  perl -MPOSIX -e 'sigprocmask(SIG_SETMASK, POSIX::SigSet->new) or die; exec @ARGV or die "exec: \$!"' -- \
    unshare -T --boottime -\$up $slurmd_bin -N "\$n" -f $conf -L $dir/log/slurmd-\$n.log >>$dir/log/slurmd-\$n.out 2>&1
  echo "\$(date +%s) resume \$n" >>$dir/log/power.log
done
exit 0
SH
  chmod +x "$dir/etc/suspend.sh" "$dir/etc/resume.sh"
  for k in $(seq 1 "$nodes"); do mkdir -p "$dir/spool/node$k"; done
  with_dbd=${ORRERY_SLURM_DBD:-}${ORRERY_SLURM_ACCOUNTS:-}
  if [[ -n $with_dbd ]]; then
    start_dbd "$base"
    dbd add cluster orrery
  fi
  start_ctld
  # The accounts after slurmctld has registered gres/gpu as a TRES (limits name it); slurmdbd
  # sends each change on to slurmctld.
  [[ -n $with_dbd ]] && load_accounts "${ORRERY_SLURM_ACCOUNTS:-}"
  for k in $(seq 1 "$nodes"); do start_node "node$k"; done
  for _ in $(seq 200); do
    idle=$(sinfo -h -N -p gpu -t idle -o '%N' 2>/dev/null | sort -u | wc -l)
    [[ $idle -ge $nodes ]] && { log "up: $nodes nodes idle in $dir"; exit 0; }
    sleep 0.1
  done
  log "nodes not idle after 20 s:"; sinfo -N >&2 || true; tail -5 "$dir"/log/slurmd-node1.log >&2 || true
  exit 1
  ;;
stop)
  # Cancel this cluster's jobs first so that no slurmstepd outlives its slurmd.
  if [[ -f $dir/run/slurmctld.pid ]] && kill -0 "$(cat "$dir/run/slurmctld.pid")" 2>/dev/null; then
    for p in gpu $(cat "$dir/etc/extra-partitions" 2>/dev/null); do scancel --full -p "$p" >/dev/null 2>&1 || true; done
    for _ in $(seq 50); do
      [[ -z $(squeue -h -t R,CG,S -o %i 2>/dev/null) ]] && break
      sleep 0.1
    done
  fi
  for f in "$dir"/run/slurmd-*.pid; do [[ -e $f ]] && stop_pidfile "$f"; done
  stop_pidfile "$dir/run/slurmctld.pid"
  stop_pidfile "$dir/run/slurmdbd.pid"
  stop_pidfile "$dir/db/mariadb.pid"
  stop_pidfile "$dir/munge/munged.pid"
  if [[ -f $dir/etc/created-users ]]; then
    while read -r u; do userdel "$u" 2>/dev/null || true; done <"$dir/etc/created-users"
    rm -f "$dir/etc/created-users"
  fi
  ;;
restart-ctld)  # restart-ctld DIR [GAP_SECONDS]: the controller is away for GAP seconds
  stop_pidfile "$dir/run/slurmctld.pid"
  sleep "${3:-0}"
  start_ctld
  ;;
start-node) start_node "${3:?node}" ;;
stop-node) stop_pidfile "$dir/run/slurmd-${3:?node}.pid" ;;
env) echo "export SLURM_CONF=$conf" ;;
*) log "unknown command $cmd"; exit 2 ;;
esac
