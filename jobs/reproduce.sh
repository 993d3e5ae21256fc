#!/usr/bin/env bash
# Reruns the settings of docs/reproduction.md's tables (configs/) at a size this 2-core machine can
# finish, then turns every results file into one Markdown report (tools/fedsilo-analysis report). Each
# config's header states the paper's full-size settings, the file's own and the reduced ones used here
# (the "reduced" column below; --full drops it and runs the configs as they are). Which table each line
# reproduces, and the commands of the tables that need longer runs: docs/reproduction.md.
#   bash jobs/reproduce.sh [--full] [--ranks N] [--seeds "0 1 2"] [--out DIR] [--manifest | --check | --slurm]
# --seeds replaces every config's own seed list. --manifest prints the plan (one "CONFIG ALGORITHM SEED
# [options]" line per run, the jobs/sweep.sbatch format); --check validates every planned command with
# fedsilo --dry-run (FEDSILO_CHECK_JOBS at a time, default twice the cores) and exits (non-zero when one is
# rejected). The runs go through jobs/local/sweep.sh
# (mpirun -n RANKS; finished runs are skipped, interrupted ones resumed: run the script again) into
# DIR/<config>_<algorithm>_s<seed>[_<options>].h5, default DIR = out/reproduce. --slurm writes the plan as a
# manifest, submits it as a job array (jobs/sweep.sbatch, FEDSILO_OUT = DIR) and a report job that runs
# after the whole array. About 3-4 hours at 2 ranks without --full (CNN PLayer-FL and GEMS take most).
# Configs with a hyper-parameter grid (GRIDS below; jobs/grids/*.grid, expanded by jobs/grid.py) first
# run the grid into DIR_grid, then `python3 -m analysis select` chooses each algorithm's value by
# validation score and the final runs use it. Until the grid's results exist, --manifest prints the
# grid's runs and a comment in place of that config's final runs, and --check checks the final runs
# with the config's own values; --slurm submits the grid first and, after it, this script again
# (FEDSILO_REPRODUCE_AFTER_GRID=1), which submits the final runs.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
FEDSILO_ROOT=$ROOT
# shellcheck source=local/common.sh
source "$ROOT/jobs/local/common.sh"  # fedsilo_sweep_output: where the sweep writes each run
FULL=0 RANKS=2 SEEDS="" OUT=$ROOT/out/reproduce MODE=run
while [ $# -gt 0 ]; do
  case $1 in
    --full) FULL=1 ;;
    --ranks) RANKS=$2; shift ;;
    --seeds) SEEDS=$2; shift ;;
    --out) OUT=$2; shift ;;
    --manifest) MODE=manifest ;;
    --check) MODE=check ;;
    --slurm) MODE=slurm ;;
    -h|--help) sed -n '2,21p' "$0"; exit 0 ;;
    *) echo "reproduce.sh: unknown argument '$1' (expected --full, --ranks N, --seeds LIST, --out DIR, --manifest, --check, --slurm)" >&2; exit 2 ;;
  esac
  shift
done

# config | algorithms | options every run needs | reduced overrides (dropped by --full) | seeds
# The GEMS configs leave rounds unset: each one-shot algorithm runs its own count (neuron-wise gems 2, else 1).
PLAN=(
  "playerfl_fmnist_mlp.ini|playerfl playerfl_random fedavg local fedbabu fedprox ditto pfedme fedlp|||0"
  "playerfl_fmnist.ini|playerfl playerfl_random fedavg local fedbabu fedprox ditto pfedme fedlp||--rounds 10|0"
  "alpha_fedavg_fmnist_mlp.ini|fedavg alpha_fedavg qffl||--rounds 5|1 2 3"
  "qffl_synthetic.ini|qffl fedavg alpha_fedavg fedfa|||0 1 2 3 4"
  "gems_fmnist_logreg.ini|gems average ensemble oneshot_local global public_only|||0 1 2 3 4"
  "gems_fmnist_mlp.ini|gems average ensemble oneshot_local global public_only|||0 1 2 3 4"
  "playerfl_heart.ini|playerfl playerfl_random fedavg local fedbabu fedprox ditto pfedme fedlp|||$(seq -s ' ' 0 49)"
  "playerfl_heart.ini|playerfl|--playerfl.split auto||$(seq -s ' ' 0 49)"
)

# config | grid spec (jobs/grid.py) | analysis select options | reduced overrides of the grid's runs
GRIDS=(
  "playerfl_fmnist.ini|jobs/grids/playerfl_fmnist_lr.grid|--param train.lr --metric loss|--rounds 3"
  "playerfl_heart.ini|jobs/grids/playerfl_heart_lr.grid|--param train.lr --metric loss|"
)
GRID_OUT=${OUT%/}_grid

# grid_of CONFIG: its GRIDS entry, or nothing.
grid_of() {
  local entry
  for entry in "${GRIDS[@]}"; do [ "${entry%%|*}" = "$1" ] && echo "$entry"; done
  return 0
}

# grid_lines ENTRY: the grid's runs (manifest lines), with its reduced overrides unless --full.
grid_lines() {
  local cfg spec opts reduced line
  IFS='|' read -r cfg spec opts reduced <<<"$1"
  [ "$FULL" = 1 ] && reduced=""
  /usr/bin/python3 "$ROOT/jobs/grid.py" "$ROOT/$spec" | grep -v "^#" | while read -r line; do echo "$line${reduced:+ $reduced}"; done
}

# selected_lines ENTRY SEEDS: the final runs of the grid's config with the values analysis select
# chooses from the grid's finished results (manifest lines); fails when there are none.
selected_lines() {
  local cfg spec opts reduced line out files=()
  IFS='|' read -r cfg spec opts reduced <<<"$1"
  [ -d "$GRID_OUT" ] || return 1  # no grid run has started: nothing to look for
  while read -r line; do
    read -r -a w <<<"$line"
    FEDSILO_OUT=$GRID_OUT fedsilo_sweep_output_to out "${w[@]}"
    if fedsilo_task_done "$out"; then files+=("$out"); fi
  done < <(grid_lines "$1")
  [ "${#files[@]}" -gt 0 ] || return 1
  # shellcheck disable=SC2086 # opts and the seeds are word lists
  (cd "$ROOT" && /usr/bin/python3 -m analysis select "${files[@]}" $opts --config "configs/$cfg" \
    --format manifest --seeds $2)
}

# build_plan: grid_runs (every grid's runs) and lines (the final runs; for a config with a grid, with
# the selected values once its results exist, else a "# ..." comment in their place).
build_plan() {
  local entry cfg algs required reduced seeds alg seed grid sel
  grid_runs=()
  lines=()
  for entry in "${GRIDS[@]}"; do
    while read -r line; do grid_runs+=("$line"); done < <(grid_lines "$entry")
  done
  for entry in "${PLAN[@]}"; do
    IFS='|' read -r cfg algs required reduced seeds <<<"$entry"
    [ "$FULL" = 1 ] && reduced=""
    [ -n "$SEEDS" ] && seeds=$SEEDS
    grid=$(grid_of "$cfg")
    if [ -n "$grid" ]; then
      if sel=$(selected_lines "$grid" "$seeds" 2>/dev/null); then
        while read -r line; do
          read -r -a words <<<"$line $required $reduced"
          case " $algs " in *" ${words[1]} "*) lines+=("${words[*]}") ;; esac
        done <<<"$sel"
        continue
      fi
      [ "$MODE" = manifest ] && { lines+=("# configs/$cfg: the final runs ($algs; seeds $seeds) follow from the grid's selection once its runs are in $GRID_OUT"); continue; }
    fi
    for alg in $algs; do
      for seed in $seeds; do
        read -r -a words <<<"configs/$cfg $alg $seed $required $reduced"  # drops the blanks of empty fields
        lines+=("${words[*]}")
      done
    done
  done
}
build_plan

# check_plan: fedsilo --dry-run on every distinct planned command (the seed does not change what parses),
# FEDSILO_CHECK_JOBS at a time (default: twice the cores; a dry run mostly waits on MPI's start-up).
check_plan() {
  local exe=${FEDSILO_EXE:-$ROOT/build/fedsilo} seen="" line cfg alg seed extra key distinct=()
  [ -x "$exe" ] || { echo "reproduce.sh: no fedsilo binary at $exe (bash jobs/setup.sh, or set FEDSILO_EXE)" >&2; return 2; }
  for line in "${grid_runs[@]}" "${lines[@]}"; do
    read -r cfg alg seed extra <<<"$line"
    key="$cfg $alg $extra"
    case "$seen" in *"|$key|"*) continue ;; esac
    seen+="|$key|"
    distinct+=("$line")
  done
  # Each dry run gets an output of its own in a temporary folder: a dry run takes its output's lock for a
  # moment, and the planned runs write files of their own (so the configuration's own output, which an
  # earlier run may have finished, is not what they would write).
  local outs rc=0
  outs=$(mktemp -d)
  printf '%s\n' "${distinct[@]}" | awk '{print NR "\t" $0}' |
    FEDSILO_EXE=$exe FEDSILO_ROOT=$ROOT FEDSILO_CHECK_OUT=$outs xargs -d '\n' -P "${FEDSILO_CHECK_JOBS:-$((2 * $(nproc)))}" -I{} \
      bash -c "$(declare -f dry_run_one); dry_run_one \"\$1\"" _ {} || rc=$?
  rm -rf "$outs"
  if [ "$rc" = 0 ]; then
    echo "reproduce.sh: all $((${#grid_runs[@]} + ${#lines[@]})) planned runs parse (${#distinct[@]} distinct commands checked with --dry-run)"
    return 0
  fi
  return 1
}

# dry_run_one "N<TAB>LINE": fedsilo --dry-run on one manifest line (CONFIG ALGORITHM SEED [options]) from
# the repository root, writing to FEDSILO_CHECK_OUT/N.h5; prints the line and fedsilo's error when it is
# rejected.
# shellcheck disable=SC2317 # run by xargs through declare -f
dry_run_one() {
  local n=${1%%$'\t'*} line=${1#*$'\t'} cfg alg seed extra err
  read -r cfg alg seed extra <<<"$line"
  # A TMPDIR of its own: an isolated Open MPI singleton (jobs/env.sh) keeps its session files in one
  # fixed folder under TMPDIR, and one that exits removes that folder while another one is creating it.
  mkdir -p "$FEDSILO_CHECK_OUT/tmp.$n"
  # shellcheck disable=SC2086 # extra is a word list
  if ! err=$(cd "$FEDSILO_ROOT" && TMPDIR="$FEDSILO_CHECK_OUT/tmp.$n" "$FEDSILO_EXE" --config "$cfg" --algorithm "$alg" --seed "$seed" $extra \
               --output "$FEDSILO_CHECK_OUT/$n.h5" --dry-run 2>&1 >/dev/null); then
    echo "reproduce.sh: rejected: $line: $err" >&2
    return 1
  fi
}

case $MODE in
  manifest) printf '%s\n' "${grid_runs[@]}" "${lines[@]}"; exit 0 ;;
  check) check_plan; exit $? ;;
esac

if [ "$MODE" = slurm ]; then
  if [ -x "${FEDSILO_EXE:-$ROOT/build/fedsilo}" ]; then check_plan; fi
  if [ "${#grid_runs[@]}" -gt 0 ] && [ "${FEDSILO_REPRODUCE_AFTER_GRID:-0}" != 1 ]; then
    # The grid first; this script again after it, to choose the values and submit the final runs.
    mkdir -p "$GRID_OUT"
    printf '%s\n' "${grid_runs[@]}" >"$GRID_OUT/manifest"
    cd "$ROOT"
    gid=$(FEDSILO_OUT=$GRID_OUT sbatch --parsable --export=ALL --array=0-$((${#grid_runs[@]} - 1)) jobs/sweep.sbatch \
          "$GRID_OUT/manifest")
    args=(--ranks "$RANKS" --out "$OUT" --slurm)
    [ "$FULL" = 1 ] && args+=(--full)
    [ -n "$SEEDS" ] && args+=(--seeds "$SEEDS")
    nid=$(sbatch --parsable --dependency=afterany:"$gid" --job-name=fedsilo-select --output="$GRID_OUT/select-%j.out" \
          --export=ALL,FEDSILO_REPRODUCE_AFTER_GRID=1 --wrap "cd '$ROOT' && bash jobs/reproduce.sh ${args[*]}")
    echo "submitted the grid array $gid (${#grid_runs[@]} runs) and job $nid, which submits the final runs after it"
    exit 0
  fi
  mkdir -p "$OUT"
  printf '%s\n' "${lines[@]}" >"$OUT/manifest"
  cd "$ROOT"
  jid=$(FEDSILO_OUT=$OUT sbatch --parsable --export=ALL --array=0-$((${#lines[@]} - 1)) jobs/sweep.sbatch "$OUT/manifest")
  rid=$(sbatch --parsable --dependency=afterany:"$jid" --job-name=fedsilo-report --output="$OUT/report-%j.out" \
        --wrap "cd '$ROOT' && /usr/bin/python3 -m analysis report '$OUT' --out '$OUT/report.md'")
  echo "submitted array $jid (${#lines[@]} runs) and report job $rid; report: $OUT/report.md"
  exit 0
fi

bash "$ROOT/jobs/setup.sh"
check_plan
cd "$ROOT"
rc=0
if [ "${#grid_runs[@]}" -gt 0 ]; then
  mkdir -p "$GRID_OUT"
  printf '%s\n' "${grid_runs[@]}" >"$GRID_OUT/manifest"
  FEDSILO_OUT=$GRID_OUT FEDSILO_RANKS=$RANKS bash "$ROOT/jobs/local/sweep.sh" "$GRID_OUT/manifest" || rc=$?
  if [ "$rc" = 75 ]; then
    echo "reproduce.sh: interrupted in the grid; run the same command again to continue" >&2
    exit 75
  fi
  [ "$rc" = 0 ] || echo "reproduce.sh: some grid runs failed (see above); the selection uses the others" >&2
  build_plan  # with the grid's results: the selected values
fi
mkdir -p "$OUT"
printf '%s\n' "${lines[@]}" >"$OUT/manifest"
FEDSILO_OUT=$OUT FEDSILO_RANKS=$RANKS bash "$ROOT/jobs/local/sweep.sh" "$OUT/manifest" || rc=$?
if [ "$rc" = 75 ]; then
  echo "reproduce.sh: interrupted; run the same command again to continue" >&2
  exit 75
fi
[ "$rc" = 0 ] || echo "reproduce.sh: some runs failed (see the lines above); the report covers the others" >&2
/usr/bin/python3 -m analysis report "$OUT" --out "$OUT/report.md"
echo "report: $OUT/report.md"
exit "$rc"
