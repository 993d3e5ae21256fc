#!/usr/bin/env bash
# label: integration
# timeout: 60
# spack/: a Spack package repository (repo.yaml with namespace fedsilo) whose recipe
# packages/fedsilo/package.py compiles, defines class Fedsilo(CMakePackage), and, imported against a
# stand-in for spack.package (Spack itself is not in Debian), declares the variants of fedsilo's CMake
# options with CMake's values and defaults, a dependency for every find_package() of CMakeLists.txt
# (cmake at least cmake_minimum_required, hdf5 +mpi, boost +program_options, the BLAS of each `blas`
# value, googletest as a test dependency) and the Python stack analysis/ imports; cmake_args() run for
# every combination of the variants sets only options CMake defines, with the values the variants say
# and the chosen BLAS provider's libraries. Details: lib/check_spack_recipe.py.
TEST_NAME=test_spack_recipe
source "$(dirname "${BASH_SOURCE[0]}")/lib/hpc_common.sh"
make_workdir
"$PY" -c 'import yaml' 2>/dev/null || die "python3-yaml is missing (apt-get install python3-yaml; jobs/setup.sh installs it)"
"$PY" - "$FEDSILO_SOURCE_DIR/spack/repo.yaml" <<'PYEOF' || fail "spack/repo.yaml (above)"
import sys, yaml
doc = yaml.safe_load(open(sys.argv[1]))
ns = (doc or {}).get("repo", {}).get("namespace")
if ns != "fedsilo":
    sys.exit(f"    spack/repo.yaml: repo: namespace is {ns!r}, expected 'fedsilo'")
print("    spack/repo.yaml: namespace fedsilo")
PYEOF
"$PY" "$(dirname "${BASH_SOURCE[0]}")/lib/check_spack_recipe.py" "$FEDSILO_SOURCE_DIR" "$WORK" ||
  fail "spack/packages/fedsilo/package.py (above)"
finish
