#!/usr/bin/env bash
# Runs the papers' settings (configs/) at a size this 2-core machine can finish, then turns every
# results file into one Markdown report (python3 -m analysis report). Each config's header states the
# full-size settings; the reduced ones are the overrides below (say --full to use the configs as they are).
#   bash jobs/reproduce.sh [--full] [--ranks N] [--seeds "0 1 2"] [--out DIR]
# SLURM variant: bash jobs/reproduce.sh --slurm  writes the plan as a manifest, submits it as a job array
# (jobs/sweep.sbatch, one task per run, FEDSILO_OUT = the output directory) and a report job that runs
# after the whole array. --manifest only prints the plan.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
FULL=0 RANKS=2 SEEDS="0 1 2" OUT=$ROOT/out/reproduce MANIFEST=0 SLURM=0
while [ $# -gt 0 ]; do
  case $1 in
    --full) FULL=1 ;;
    --ranks) RANKS=$2; shift ;;
    --seeds) SEEDS=$2; shift ;;
    --out) OUT=$2; shift ;;
    --manifest) MANIFEST=1 ;;
    --slurm) SLURM=1 ;;
    -h|--help) sed -n '2,8p' "$0"; exit 0 ;;
    *) echo "reproduce.sh: unknown argument '$1' (expected --full, --ranks N, --seeds LIST, --out DIR, --manifest, --slurm)" >&2; exit 2 ;;
  esac
  shift
done

# config | algorithms | reduced overrides (empty with --full)
PLAN=(
  "playerfl_fmnist_mlp.ini|playerfl playerfl_random fedavg local fedbabu fedprox ditto pfedme fedlp|--rounds 10"
  "playerfl_fmnist.ini|playerfl playerfl_random fedavg local fedbabu fedprox ditto pfedme fedlp|"
  "alpha_fedavg_fmnist_mlp.ini|fedavg alpha_fedavg qffl|--rounds 20"
  "qffl_synthetic.ini|qffl fedavg alpha_fedavg fedfa|"
  "gems_fmnist_logreg.ini|gems average ensemble oneshot_local global public_only|"
  "gems_fmnist_mlp.ini|gems average ensemble oneshot_local global public_only|"
)

lines=()
for entry in "${PLAN[@]}"; do
  IFS='|' read -r cfg algs reduced <<<"$entry"
  [ "$FULL" = 1 ] && reduced=""
  for alg in $algs; do
    for seed in $SEEDS; do
      lines+=("configs/$cfg $alg $seed $reduced")
    done
  done
done
if [ "$MANIFEST" = 1 ]; then printf '%s\n' "${lines[@]}"; exit 0; fi
if [ "$SLURM" = 1 ]; then
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
# shellcheck source=jobs/env.sh
source "$ROOT/jobs/env.sh"
mkdir -p "$OUT"
cd "$ROOT"
for line in "${lines[@]}"; do
  read -r cfg alg seed extra <<<"$line"
  name=$(basename "$cfg" .ini)_${alg}_s$seed
  if [ -f "$OUT/$name.h5" ]; then echo "== $name: done already"; continue; fi
  echo "== $name"
  # shellcheck disable=SC2086
  mpirun -n "$RANKS" "$ROOT/build/fedsilo" --config "$cfg" --algorithm "$alg" --seed "$seed" --output "$OUT/$name.h5" $extra \
    >"$OUT/$name.log" 2>&1 || { echo "   failed (see $OUT/$name.log)"; }
done
/usr/bin/python3 -m analysis report "$OUT" --out "$OUT/report.md"
echo "report: $OUT/report.md"
