#!/usr/bin/env bash
# `make install` and `make install-dev`: installs the project's dependencies into the virtualenv,
# quietly. Usage: config/install.sh PYTHON VENV_PYTHON [EXTRA]; EXTRA is `dev` for the test extras.
# The runtime dependencies are what the demo and a server need; the dev extras add the test runner,
# the linters and the reference libraries the statistics are tested against (pyproject.toml).
set -euo pipefail
cd "$(dirname "$0")/.."
python=$1
venv_python=$2
extra=${3:-}

if [ ! -x "$venv_python" ]; then
  echo "Creating $(dirname "$(dirname "$venv_python")") with $python ($("$python" --version))"
  "$python" -m venv "$(dirname "$(dirname "$venv_python")")"
fi
what="the runtime dependencies"
if [ -n "$extra" ]; then what="the $extra extras"; fi
# The requirements are read from pyproject.toml and installed directly: the project itself is not
# installed (it has no package to install, `packages = []`), which spares pip an isolated build
# environment with setuptools and an editable wheel on every install.
# --no-compile: pip would byte-compile every module of every package (most of Django's, scipy's
# and matplotlib's are never imported here); Python compiles the ones imported on first use.
# Together they took a cold runtime install from 49.9 s to 17.2 s (docs/development/benchmarks.md).
mapfile -t requirements < <("$venv_python" - "$extra" <<'PY'
import sys
import tomllib

with open("pyproject.toml", "rb") as f:
    project = tomllib.load(f)["project"]
extra = sys.argv[1]
print("\n".join(project["optional-dependencies"][extra] if extra else project["dependencies"]))
PY
)
echo "Installing $what (pyproject.toml, pinned by constraints.txt)"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! "$venv_python" -m pip install --quiet --disable-pip-version-check --no-compile -c constraints.txt "${requirements[@]}" >"$log" 2>&1; then
  cat "$log" >&2
  echo "pip could not install $what: see the lines above" >&2
  exit 1
fi
# This machine's pip configuration names local package folders that may be absent: pip says so per
# package, which says nothing about the install.
grep -vE "^WARNING: Location 'file:[^']*' is ignored" "$log" |
  grep -vE '^ *$' || true
