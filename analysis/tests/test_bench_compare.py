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


def test_the_step_on_each_vcpu_is_listed_and_a_spread_is_pointed_out(tmp_path):
    peak = "fma_peak isa=avx512 threads=2 gflops=400"
    steps = ["vcpu_step when=before cpu=0 us=147.2", "vcpu_step when=before cpu=1 us=169.0",
             "vcpu_step when=after cpu=0 us=146.1", "vcpu_step when=after cpu=1 us=151.3"]
    out = compare(tmp_path, [fedsilo_row("fp32", [0.2])], [peak] + steps)
    assert ("W1 training step per vCPU (bench/step_bench.cpp, CPU time): before the runs vCPU 0 147.2 µs, "
            "vCPU 1 169.0 µs; after the runs vCPU 0 146.1 µs, vCPU 1 151.3 µs") in out
    # 169.0 / 147.2 = 1.148: the larger of the two measurements' spreads.
    assert "the vCPUs ran the same step up to x1.15 apart" in out


def test_vcpus_within_five_percent_get_no_note(tmp_path):
    steps = ["vcpu_step when=before cpu=0 us=147.0", "vcpu_step when=before cpu=1 us=154.0"]
    out = compare(tmp_path, [fedsilo_row("fp32", [0.2])], ["fma_peak isa=avx512 threads=2 gflops=400"] + steps)
    assert "before the runs vCPU 0 147.0 µs, vCPU 1 154.0 µs" in out
    assert "apart" not in out


def test_without_step_lines_nothing_about_vcpus_is_printed(tmp_path):
    out = compare(tmp_path, [fedsilo_row("fp32", [0.2])], ["fma_peak isa=avx512 threads=2 gflops=400"])
    assert "per vCPU" not in out
