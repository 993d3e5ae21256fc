# Shared by the bench scripts (sourced after their option parsing).
# use_build: makes BUILD absolute, sets EXE to its fedsilo executable (which must exist) and PY to
# Debian's python3 (numpy, h5py, torch: a pyenv python3 earlier on PATH does not see them).
use_build() {
  BUILD=$(cd "$BUILD" && pwd)
  EXE=$BUILD/fedsilo
  PY=/usr/bin/python3
  [ -x "$EXE" ] || { echo "no fedsilo executable at $EXE (build first, or pass --build DIR)" >&2; exit 2; }
}
