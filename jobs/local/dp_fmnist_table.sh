#!/usr/bin/env bash
# One CSV line per task of the DP-FedAvg FashionMNIST sweeps (jobs/grids/dp_fedavg_fmnist*.grid), read
# from the logs of jobs/local/sweep.sh (its "== task" lines name each task's options and results file;
# a task that failed has its "fedsilo: error:" line in the log) and from the results files with h5dump
# (hdf5-tools; no Python needed). Columns: seed, DP on, target epsilon, clip, server optimizer, status
# (ok; "diverged in round R" for a run that stopped with a diverged client's error; else the error line), the noise multiplier z, epsilon after the last round, mean
# client validation and test accuracy after the last round, the global model's accuracy. docs/privacy.md
# ("DP-FedAvg on FashionMNIST") shows the table built from it.
#   jobs/local/dp_fmnist_table.sh SWEEP_LOG... > docs/privacy_fmnist_runs.csv
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: jobs/local/dp_fmnist_table.sh SWEEP_LOG..." >&2; exit 2; }

# h5 FILE DATASET: the dataset's values, one a line.
h5() {
  h5dump -d "$2" -y -w 0 "$1" | sed -n '/DATA {/,/}/p' | sed '1d;$d' | tr ',' '\n' | awk 'NF { print $1 }'
}
mean() { awk '$1 == $1 + 0 { s += $1; n++ } END { if (n) printf "%.4f", s / n; else printf "nan" }'; }

# The tasks, "OUTPUT<TAB>SEED OPTIONS<TAB>ERROR", the last log that ran a task winning.
tasks=$(awk '
  /^== task [0-9]+\/[0-9]+: / { split($0, part, " -> "); out = part[2]; sub(/ .*/, "", out)
                                line = part[1]; sub(/^== task [^:]*: [^ ]+ [^ ]+ /, "", line)
                                if (!(out in err)) order[++n] = out; args[out] = line; err[out] = ""; next }
  /^fedsilo: error: / && out != "" { msg = $0; sub(/^fedsilo: error: /, "", msg); gsub(/"/, "\x27", msg); err[out] = msg }
  END { for (i = 1; i <= n; i++) printf "%s\t%s\t%s\n", order[i], args[order[i]], err[order[i]] }' "$@")

echo "seed,dp,target_epsilon,clip,server_optimizer,status,noise_multiplier,epsilon,val_accuracy,test_accuracy,global_accuracy"
while IFS=$'\t' read -r out args error; do
  read -r -a a <<<"$args"
  seed=${a[0]} dp=yes eps="" clip=1 server=none
  for ((i = 1; i < ${#a[@]}; i += 2)); do
    case ${a[i]} in
      --privacy.level) [ "${a[i + 1]}" = none ] && dp=no ;;
      --privacy.target_epsilon) eps=${a[i + 1]} ;;
      --privacy.clip) clip=${a[i + 1]} ;;
      --fl.server_optimizer) server=${a[i + 1]} ;;
    esac
  done
  [ "$dp" = no ] && eps="" clip=""
  if [ -f "$out" ] && [ -z "$error" ]; then
    z="" e=""
    if [ "$dp" = yes ]; then
      z=$(h5 "$out" /privacy/noise_multiplier | head -1)
      e=$(h5 "$out" /privacy/epsilon | tail -1)
    fi
    echo "$seed,$dp,$eps,$clip,$server,ok,$z,$e,$(h5 "$out" /summary/client_val_accuracy | mean)," \
      "$(h5 "$out" /summary/mean | head -1),$(h5 "$out" /summary/global_accuracy | head -1)" | tr -d ' '
  else
    status=${error:-no results file}
    # A diverged client (loss or update NaN/Inf): "diverged in round R", R counted from 0.
    if [[ $status =~ ^client\ [0-9]+\ round\ ([0-9]+):.*(became|contains) ]]; then
      status="diverged in round ${BASH_REMATCH[1]}"
    fi
    echo "$seed,$dp,$eps,$clip,$server,\"$status\",,,,,"
  fi
done <<<"$tasks"
