"""bench/perf_tools.py compare: the table bench/compare_torch.sh prints, checked on made-up runs."""

import json
import os
import subprocess

from analysis.tests.conftest import REPO

TOOL = os.path.join(REPO, "bench", "perf_tools.py")


def fedsilo_row(label, train_s, cpu_s=(1.0, 1.0)):
    return dict(program="fedsilo", label=label, workload="w1", cores=2, round_s=[t + 0.01 for t in train_s],
                train_s=train_s, rounds=len(train_s), samples=60000, final_acc=0.83, rss_mb=[90.0, 91.0],
                cpu_s=list(cpu_s))


def compare(tmp_path, rows, peak_lines):
    runs = tmp_path / "runs.jsonl"
    runs.write_text("".join(json.dumps(r) + "\n" for r in rows))
    peaks = tmp_path / "fma_peak.txt"
    peaks.write_text("".join(line + "\n" for line in peak_lines))
    out = subprocess.run(["/usr/bin/python3", TOOL, "compare", str(runs), str(peaks)], check=True,
                         capture_output=True, text=True)
    return out.stdout


def test_each_repetition_is_listed_with_its_share_of_the_peak(tmp_path):
    # W1 counts 879,200 FLOPs a sample; 60,000 samples in 0.2 s = 300,000/s = 263.76 GFLOP/s, 60% of 439.6.
    rows = [fedsilo_row("fp32", [0.2, 0.2, 0.3]), fedsilo_row("fp32", [0.3, 0.4, 0.4])]
    out = compare(tmp_path, rows, ["fma_peak isa=avx512 threads=2 gflops=439.6"])
    assert "per repetition" in out
    assert "    fp32: 300,000 (60%, 1.00 CPU s), 150,000 (30%, 1.00 CPU s)" in out
    # The pooled median (0.3 s over the six rounds) is what the table's row shows.
    assert "    200000" in out


def test_each_repetition_shows_the_cpu_seconds_of_its_busiest_rank(tmp_path):
    # A host that slows the vCPUs mid-run shows as more CPU seconds for the same work in that repetition.
    rows = [fedsilo_row("fp32", [0.2], cpu_s=[3.45, 3.53]), fedsilo_row("fp32", [0.25], cpu_s=[3.86, 3.78])]
    out = compare(tmp_path, rows, ["fma_peak isa=avx512 threads=2 gflops=439.6"])
    assert "    fp32: 300,000 (60%, 3.53 CPU s), 240,000 (48%, 3.86 CPU s)" in out


def test_variants_are_compared_repetition_by_repetition(tmp_path):
    rows = [fedsilo_row("fp32", [0.2]), fedsilo_row("bf16", [0.1]),
            fedsilo_row("fp32", [0.3]), fedsilo_row("bf16", [0.2])]
    out = compare(tmp_path, rows, ["fma_peak isa=avx512 threads=2 gflops=400"])
    assert "bf16 vs fp32: samples/s x1.67 (repetition by repetition: x2.00, x1.50)" in out


def test_one_repetition_prints_no_repetition_list(tmp_path):
    out = compare(tmp_path, [fedsilo_row("fp32", [0.2])], ["fma_peak isa=avx512 threads=2 gflops=400"])
    assert "per repetition" not in out
    assert "300000" in out
