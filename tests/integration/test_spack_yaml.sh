#!/usr/bin/env bash
# label: integration
# timeout: 60
# spack.yaml at the repository root: valid YAML (python3-yaml), every spec a quoted string (an
# unquoted "cmake@3.18:" parses as a mapping), hdf5 with +mpi and boost with +program_options, mpi
# provided by openmpi built for SLURM (schedulers=slurm, mpirun kept), SLURM itself never built, the
# repository's own Spack repo (./spack) listed, and exactly what the project needs: every find_package()
# in CMakeLists.txt and cmake/*.cmake maps to a spec (one found only under FEDSILO_ONEDNN or FEDSILO_ZFP: to the
# recipe's +onednn or +zfp variant instead), with a lower version bound at least CMake's
# minimum; ninja (the generator of jobs/setup.sh); python and a py-<module> spec for every third-party
# module that analysis/ imports (its tests included); and nothing else.
TEST_NAME=test_spack_yaml
source "$(dirname "${BASH_SOURCE[0]}")/lib/hpc_common.sh"
"$PY" -c 'import yaml' 2>/dev/null || die "python3-yaml is missing (apt-get install python3-yaml; jobs/setup.sh installs it)"
"$PY" - "$FEDSILO_SOURCE_DIR" <<'PYEOF' || fail "spack.yaml (above)"
import ast, pathlib, re, sys, yaml
root = sys.argv[1]
bad = []
with open(f"{root}/spack.yaml") as fh:
    doc = yaml.safe_load(fh)
specs = (doc or {}).get("spack", {}).get("specs")
if not isinstance(specs, list) or not specs:
    sys.exit("    spack.yaml: no spack: specs: list")
by = {}
for s in specs:
    if not isinstance(s, str):
        bad.append(f"spec {s!r} is a {type(s).__name__}, not a string: quote it")
        continue
    m = re.match(r"^([a-z0-9-]+)(?:@([0-9.]+)(:?))?(.*)$", s.strip())
    if not m:
        bad.append(f"spec {s!r} does not parse")
        continue
    name, ver, colon, rest = m.groups()
    by[name] = (ver, rest, s)

def vt(v):
    return tuple(int(x) for x in v.split("."))

# CMake package -> Spack package
cmake_to_spack = {"MPI": "openmpi", "Eigen3": "eigen", "BLAS": "openblas", "HDF5": "hdf5", "Boost": "boost",
                  "ZLIB": "zlib", "GTest": "googletest", "benchmark": "benchmark"}
# CMakeLists.txt and the cmake/*.cmake files it includes (cmake/blas.cmake finds the BLAS).
text = "\n".join(p.read_text() for p in [pathlib.Path(root, "CMakeLists.txt"),
                                          *sorted(pathlib.Path(root, "cmake").glob("*.cmake"))])
need = {"cmake": re.search(r"cmake_minimum_required\(VERSION ([0-9.]+)", text).group(1)}
# Found only under an optional CMake option (FEDSILO_ONEDNN): not in the environment, which builds
# the default; the recipe's variant must bring them (OpenMP comes with the compiler).
optional = {"dnnl": 'depends_on("onednn", when="+onednn")', "OpenMP": None,
            "zfp": 'depends_on("zfp@1.0:", when="+zfp")', "PkgConfig": 'depends_on("pkgconfig", type="build", when="+zfp")'}
recipe = pathlib.Path(root, "spack", "packages", "fedsilo", "package.py").read_text()
for pkg, ver in re.findall(r"find_package\((\w+)(?:\s+([0-9][0-9.]*))?", text):
    if pkg in optional:
        if optional[pkg] and optional[pkg] not in recipe:
            bad.append(f"CMakeLists.txt: find_package({pkg}) is optional, but the recipe lacks {optional[pkg]}")
        continue
    if pkg not in cmake_to_spack:
        bad.append(f"CMakeLists.txt: find_package({pkg}) has no Spack mapping here: add it to spack.yaml and this test")
        continue
    need[cmake_to_spack[pkg]] = ver or None
for name, ver in need.items():
    if name not in by:
        bad.append(f"CMake needs {name} but spack.yaml has no spec for it")
    elif ver and (by[name][0] is None or vt(by[name][0]) < vt(ver)):
        bad.append(f"{by[name][2]!r}: CMake requires {name} >= {ver}")
# The build tool and analysis/'s Python stack: python plus one py-<module> per third-party import.
need["ninja"] = None
need["python"] = None
imports = set()
for py in pathlib.Path(root, "analysis").rglob("*.py"):
    for node in ast.walk(ast.parse(py.read_text())):
        if isinstance(node, ast.Import):
            imports |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            imports.add(node.module.split(".")[0])
for module in sorted(imports - set(sys.stdlib_module_names) - {"analysis", "__future__"}):
    need[f"py-{module}"] = None
for name in need:
    if (name in ("ninja", "python") or name.startswith("py-")) and name not in by:
        bad.append(f"spack.yaml has no spec for {name} (" +
                   ("the build generator" if name == "ninja" else "analysis/ imports it") + ")")
for name in by:
    if name not in need:
        bad.append(f"spack.yaml lists {name}, which neither CMakeLists.txt, the build nor analysis/ needs")
if "hdf5" in by and "+mpi" not in by["hdf5"][1]:
    bad.append("hdf5 needs +mpi (fedsilo writes its results with parallel HDF5)")
if "boost" in by and "+program_options" not in by["boost"][1]:
    bad.append("boost needs +program_options")
prov = doc["spack"].get("packages", {}).get("all", {}).get("providers", {})
if "openmpi" not in (prov.get("mpi") or []):
    bad.append("packages: all: providers: mpi should be [openmpi]")
if "openmpi" in by and not ("schedulers=slurm" in by["openmpi"][1] and "+legacylaunchers" in by["openmpi"][1]):
    bad.append(f"{by['openmpi'][2]!r}: Open MPI for SLURM needs schedulers=slurm (+legacylaunchers keeps mpirun)")
if (doc["spack"].get("packages", {}).get("slurm") or {}).get("buildable") is not False:
    bad.append("packages: slurm: buildable should be false (the site's SLURM, never one built by Spack)")
repos = doc["spack"].get("repos") or []
if "./spack" not in repos or not pathlib.Path(root, "spack", "repo.yaml").is_file():
    bad.append(f"repos: {repos}: expected ./spack (the repository's own Spack repo, spack/repo.yaml)")
for m in bad:
    print("   ", m)
if not bad:
    print("    specs:", ", ".join(s for *_, s in by.values()))
sys.exit(1 if bad else 0)
PYEOF
finish
