"""Checks spack/packages/fedsilo/package.py without Spack (test_spack_recipe.sh; Spack is not in Debian).

The recipe is compiled, its class is found in the syntax tree (a CMakePackage named Fedsilo), then it is
imported against a stand-in `spack.package` that records the directives, and cmake_args() is run for
every combination of the variants. What it must say is derived from the project itself: the variants
from the CMake options they set (their values and defaults), the dependencies from CMakeLists.txt's
find_package() calls and cmake_minimum_required, the Python stack from what analysis/ imports.
Usage: check_spack_recipe.py SOURCE_DIR WORK_DIR (for the compiled file); prints each finding, exits 1 if any.
"""
import ast
import contextlib
import importlib.util
import itertools
import py_compile
import re
import sys
import types
from pathlib import Path

ROOT = Path(sys.argv[1])
RECIPE = ROOT / "spack/packages/fedsilo/package.py"
bad = []

# ---- the project's side: CMake options and dependencies, analysis/'s imports ----------------------------
cmake_text = "\n".join(p.read_text() for p in [ROOT / "CMakeLists.txt", *sorted((ROOT / "cmake").glob("*.cmake"))])
cmake_vars = set(re.findall(r"option\((\w+)", cmake_text)) | set(re.findall(r"set\((\w+) [^\n]*CACHE", cmake_text))
cmake_vars.add("BLAS_LIBRARIES")  # FindBLAS's override (cmake/blas.cmake)
choices = {name: vals.split() for name, vals in re.findall(r"set_property\(CACHE (\w+) PROPERTY STRINGS ([^)]*)\)",
                                                           cmake_text)}
defaults = dict(re.findall(r'set\((\w+) "(\w+)" CACHE STRING', cmake_text))
defaults.update((n, v) for n, v in re.findall(r'option\((\w+) "[^"]*" (ON|OFF)\)', cmake_text))
cmake_min = re.search(r"cmake_minimum_required\(VERSION ([0-9.]+)", cmake_text).group(1)
find_packages = dict(re.findall(r"find_package\((\w+)(?:\s+([0-9][0-9.]*))?", cmake_text))

stdlib = set(sys.stdlib_module_names)
analysis_imports = set()
for py in (ROOT / "analysis").rglob("*.py"):
    if "tests" in py.relative_to(ROOT / "analysis").parts:
        continue  # analysis/tests is not installed
    for node in ast.walk(ast.parse(py.read_text())):
        if isinstance(node, ast.Import):
            analysis_imports |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            analysis_imports.add(node.module.split(".")[0])
analysis_third_party = {m for m in analysis_imports if m not in stdlib and m not in ("analysis", "__future__")}

# ---- syntax, and the class as written -----------------------------------------------------------------
py_compile.compile(str(RECIPE), doraise=True, cfile=str(Path(sys.argv[2]) / "package.pyc"))
tree = ast.parse(RECIPE.read_text())
classes = [n for n in tree.body if isinstance(n, ast.ClassDef)]
if [c.name for c in classes] != ["Fedsilo"]:
    bad.append(f"expected one class Fedsilo, found {[c.name for c in classes]}")
elif not any(isinstance(b, ast.Name) and b.id == "CMakePackage" for b in classes[0].bases):
    bad.append("class Fedsilo does not derive from CMakePackage")
elif not any(isinstance(f, ast.FunctionDef) and f.name == "cmake_args" for f in classes[0].body):
    bad.append("class Fedsilo has no cmake_args()")

# ---- a stand-in spack.package that records the directives ---------------------------------------------
directives = {"variant": {}, "depends_on": [], "version": []}
when_stack = []


def variant(name, default=None, values=None, multi=False, description="", **_):
    directives["variant"][name] = {"default": default, "values": tuple(values) if values else (True, False)}


def depends_on(spec, when=None, type=("build", "link")):
    conds = [c for c in [*when_stack, when] if c]
    directives["depends_on"].append({"spec": spec, "when": " ".join(conds), "type": (type,) if isinstance(type, str)
                                     else tuple(type)})


@contextlib.contextmanager
def when(cond):
    when_stack.append(cond)
    yield
    when_stack.pop()


class Libs:
    def __init__(self, name):
        self.name = name

    def joined(self, sep=" "):
        return sep.join([f"/opt/{self.name}/lib/lib{self.name}.so"])


class FakeSpec:
    def __init__(self, values):
        self.variants = {k: types.SimpleNamespace(value=v) for k, v in values.items()}
        self.deps = set()

    def __getitem__(self, name):
        if name not in self.deps:
            raise KeyError(f"spec has no dependency {name!r}")
        return types.SimpleNamespace(name=name, libs=Libs(name))


class CMakePackage:
    def define(self, name, value):
        kind = "BOOL" if isinstance(value, bool) else "STRING"
        value = ("ON" if value else "OFF") if isinstance(value, bool) else value
        return f"-D{name}:{kind}={value}"

    def define_from_variant(self, name, variant_name):
        return self.define(name, self.spec.variants[variant_name].value)


stub = types.ModuleType("spack.package")
stub.__dict__.update(variant=variant, depends_on=depends_on, when=when, CMakePackage=CMakePackage,
                     version=lambda v, **kw: directives["version"].append(v), conflicts=lambda *a, **k: None,
                     maintainers=lambda *a: None, license=lambda *a, **k: None, working_dir=None, ctest=None)
sys.modules["spack"] = types.ModuleType("spack")
sys.modules["spack.package"] = stub
spec = importlib.util.spec_from_file_location("fedsilo_recipe", RECIPE)
recipe = importlib.util.module_from_spec(spec)
spec.loader.exec_module(recipe)
Pkg = recipe.Fedsilo
V = directives["variant"]

# ---- variants: the CMake options they set, the same values and defaults ----------------------------------
expect_variants = {"native": "FEDSILO_NATIVE", "gemm": "FEDSILO_GEMM", "blas": "FEDSILO_BLAS", "man": "FEDSILO_MAN",
                   "onednn": "FEDSILO_ONEDNN", "zfp": "FEDSILO_ZFP"}
for var, opt in expect_variants.items():
    if var not in V:
        bad.append(f"no variant {var!r} (CMake option {opt})")
    elif opt in choices and sorted(V[var]["values"]) != sorted(choices[opt]):
        bad.append(f"variant {var} values {V[var]['values']} != CMake's {opt} choices {choices[opt]}")
    elif opt in choices and V[var]["default"] != defaults.get(opt):
        bad.append(f"variant {var} default {V[var]['default']!r} != CMake's {opt} default {defaults.get(opt)!r}")
if V.get("man", {}).get("default") is not True or defaults.get("FEDSILO_MAN") != "ON":
    bad.append("variant man should default to True, as FEDSILO_MAN does")
if V.get("onednn", {}).get("default") is not False or defaults.get("FEDSILO_ONEDNN") != "OFF":
    bad.append("variant onednn should default to False, as FEDSILO_ONEDNN does")
if V.get("zfp", {}).get("default") is not False or defaults.get("FEDSILO_ZFP") != "OFF":
    bad.append("variant zfp should default to False, as FEDSILO_ZFP does")
if "analysis" not in V:
    bad.append("no variant 'analysis' (the Python stack of fedsilo-analysis)")

# ---- dependencies ---------------------------------------------------------------------------------------
def deps_named(name):
    return [d for d in directives["depends_on"] if re.match(rf"^{re.escape(name)}(?![\w-])", d["spec"])]


def vt(v):
    return tuple(int(x) for x in v.split("."))


def need(name, version=None, variants=(), types_=None, when=""):
    found = [d for d in deps_named(name) if d["when"] == when]
    if not found:
        bad.append(f"no depends_on({name!r}" + (f", when={when!r}" if when else "") + ")")
        return
    d = found[0]
    m = re.search(r"@([0-9.]+):", d["spec"])
    if version and (not m or vt(m.group(1)) < vt(version)):
        bad.append(f"depends_on({d['spec']!r}): CMake needs {name} >= {version}")
    for v in variants:
        if v not in d["spec"]:
            bad.append(f"depends_on({d['spec']!r}) lacks {v}")
    if types_ and set(d["type"]) != set(types_):
        bad.append(f"depends_on({d['spec']!r}) has type {d['type']}, expected {types_}")


cmake_to_spack = {"MPI": ("mpi", ()), "HDF5": ("hdf5", ("+mpi",)), "Eigen3": ("eigen", ()),
                  "Boost": ("boost", ("+program_options",)), "ZLIB": ("zlib-api", ())}
need("cmake", cmake_min, types_=("build",))
for pkg, ver in find_packages.items():
    if pkg in cmake_to_spack:
        need(cmake_to_spack[pkg][0], ver or None, cmake_to_spack[pkg][1])
    elif pkg == "BLAS":
        for value, provider in {"openblas": "openblas", "blis": "blis", "generic": "blas"}.items():
            need(provider, when=f"blas={value}")
    elif pkg == "GTest":
        need("googletest", variants=("+gmock",), types_=("test",))
    elif pkg == "benchmark":
        pass  # bench/ is never built by the recipe (FEDSILO_BUILD_BENCH OFF, checked below)
    elif pkg == "dnnl":
        need("onednn", when="+onednn")
    elif pkg == "zfp":
        need("zfp", ver or None, when="+zfp")
    elif pkg == "PkgConfig":
        need("pkgconfig", types_=("build",), when="+zfp")  # cmake/zfp.cmake's fallback, under FEDSILO_ZFP only
    elif pkg == "OpenMP":
        pass  # the compiler's own runtime (with FEDSILO_ONEDNN only), not a Spack package
    else:
        bad.append(f"CMakeLists.txt: find_package({pkg}) has no mapping here: add its depends_on and this check")
py_deps = {d["spec"].split("@")[0] for d in directives["depends_on"] if d["spec"].startswith("py-")}
expect_py = {f"py-{m}" for m in analysis_third_party}
if py_deps != expect_py:
    bad.append(f"Python dependencies {sorted(py_deps)} != what analysis/ imports {sorted(expect_py)}")
for d in directives["depends_on"]:
    if d["spec"].startswith(("py-", "python")) and (d["when"] != "+analysis" or d["type"] != ("run",)):
        bad.append(f"depends_on({d['spec']!r}) should be type run when +analysis")

# ---- cmake_args() for every combination -------------------------------------------------------------------
combos = 0
for native, gemm, blas, man, tests, onednn in itertools.product(V["native"]["values"], V["gemm"]["values"],
                                                                 V["blas"]["values"], (True, False), (True, False),
                                                                 (True, False)):
    pkg = Pkg.__new__(Pkg)
    zfp = onednn  # the two optional backends toggle together: each value of each is covered
    pkg.spec = FakeSpec({"native": native, "gemm": gemm, "blas": blas, "man": man, "analysis": True,
                         "onednn": onednn, "zfp": zfp})
    pkg.spec.deps = {d["spec"].split("@")[0].split()[0] for d in directives["depends_on"]
                     if d["when"] in ("", f"blas={blas}", "+analysis") + (("+onednn", "+zfp") if onednn else ())}
    pkg.run_tests = tests
    args = {}
    for a in pkg.cmake_args():
        m = re.match(r"^-D(\w+):(\w+)=(.*)$", a)
        if not m:
            bad.append(f"cmake_args: {a!r} is not -DNAME:TYPE=VALUE")
            continue
        args[m.group(1)] = m.group(3)
    unknown = set(args) - cmake_vars
    if unknown:
        bad.append(f"cmake_args sets {sorted(unknown)}, which CMakeLists.txt and cmake/ do not define")
    expect = {"FEDSILO_NATIVE": "ON" if native else "OFF", "FEDSILO_GEMM": gemm, "FEDSILO_BLAS": blas,
              "FEDSILO_MAN": "ON" if man else "OFF", "FEDSILO_BUILD_TESTS": "ON" if tests else "OFF",
              "FEDSILO_BUILD_BENCH": "OFF", "FEDSILO_ONEDNN": "ON" if onednn else "OFF",
              "FEDSILO_ZFP": "ON" if zfp else "OFF",
              "BLAS_LIBRARIES": Libs({"openblas": "openblas", "blis": "blis", "generic": "blas"}[blas]).joined(";")}
    for k, v in expect.items():
        if args.get(k) != v:
            bad.append(f"native={native} gemm={gemm} blas={blas} man={man} tests={tests} onednn={onednn}: "
                       f"{k}={args.get(k)!r}, "
                       f"expected {v!r}")
    combos += 1

for m in sorted(set(bad)):
    print("   ", m)
if not bad:
    shown = ", ".join(f"{k}={v['default']}" for k, v in V.items())
    print(f"    class Fedsilo(CMakePackage); variants {shown}; {len(directives['depends_on'])} depends_on; "
          f"cmake_args() checked for {combos} combinations")
sys.exit(1 if bad else 0)
