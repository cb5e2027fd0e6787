# Sourced by .ci/run and scripts/test-ray.sh: each phase's wall time and CPU time, kept in one file for a run and all
# the scripts it starts, printed as the last lines of the log (the end is what CI shows).
#
#   phase NAME COMMAND...   runs COMMAND; appends "NAME: W s wall, C CPU-s, exit RC" to the run's file; returns RC
#   phases_report [PREFIX]  prints the lines so far (those starting with PREFIX); in the run's first script, then the
#                           whole run's wall time and the machine's CPU since it sourced this file
#   logged DIR NAME CMD...  runs CMD with its output in DIR/NAME.log and its exit code in DIR/NAME.rc (for a command
#                           run in the background beside others, its log printed once all are done)
#   show_log DIR NAME TITLE prints "==== TITLE ====" and that log; returns the command's exit code
#
# CPU-s is the machine's busy time over the phase (user, nice, system, irq and softirq of every core, from
# /proc/stat): a Ray cluster's processes run in sessions of their own that no script waits for, so a script's own
# rusage would leave them out. Phases that run side by side each count the other's CPU too; the total line counts
# everything once. On a quiet machine it is the run's CPU time; on a shared one it includes its neighbours'.
#
# RAY_GPU_PHASES names the run's file and RAY_GPU_PHASES_CPU0 the machine's busy ticks at its start; the first
# script that sources this file sets both and exports them, so the scripts it starts add to the same file.

# The machine's busy time since boot, in clock ticks: user, nice, system, irq, softirq (the "cpu" line of /proc/stat).
busy_ticks() { awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8; exit }' /proc/stat; }
TICKS_PER_S=$(getconf CLK_TCK)

# Whether this script started the run (and so reports its total).
phases_owner=false
if [ -z "${RAY_GPU_PHASES:-}" ]; then
  phases_owner=true
  RAY_GPU_PHASES=$(mktemp)
  RAY_GPU_PHASES_CPU0=$(busy_ticks)
  RAY_GPU_PHASES_T0=$(date +%s)
  export RAY_GPU_PHASES RAY_GPU_PHASES_CPU0 RAY_GPU_PHASES_T0
fi

phase() {
  local name=$1 t0 c0 rc=0
  shift
  t0=$(date +%s)
  c0=$(busy_ticks)
  "$@" || rc=$?
  printf '%s: %d s wall, %d CPU-s, exit %d\n' "$name" $(($(date +%s) - t0)) $((($(busy_ticks) - c0) / TICKS_PER_S)) "$rc" \
    >>"$RAY_GPU_PHASES"
  return $rc
}

phases_report() {
  awk -v prefix="${1:-}" 'index($0, prefix) == 1' "$RAY_GPU_PHASES"
  "$phases_owner" || return 0
  printf 'since the start: %d s wall, %d CPU-s (the machine, %d cores)\n' $(($(date +%s) - RAY_GPU_PHASES_T0)) \
    $((($(busy_ticks) - RAY_GPU_PHASES_CPU0) / TICKS_PER_S)) "$(nproc)"
}

logged() {
  local dir=$1 name=$2 rc=0
  shift 2
  "$@" >"$dir/$name.log" 2>&1 || rc=$?
  echo "$rc" >"$dir/$name.rc"
}

show_log() {
  echo "==== $3 ===="
  cat "$1/$2.log"
  return "$(cat "$1/$2.rc")"
}
