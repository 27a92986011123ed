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
target=.
what="the runtime dependencies"
if [ -n "$extra" ]; then target=".[$extra]"; what="the $extra extras"; fi
echo "Installing $what (pyproject.toml, pinned by constraints.txt)"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# setuptools warns about editable installs on every run; the warning is about package folders,
# which this project does not install (`packages = []`), so it is kept out of the terminal.
if ! "$venv_python" -m pip install --quiet --disable-pip-version-check -c constraints.txt -e "$target" >"$log" 2>&1; then
  cat "$log" >&2
  echo "pip could not install $what: see the lines above" >&2
  exit 1
fi
# This machine's pip configuration names local package folders that may be absent: pip says so per
# package, which says nothing about the install.
grep -vE "^WARNING: Location 'file:[^']*' is ignored" "$log" |
  grep -vE 'BuildBackendWarning|^ *!!$|^ *\*+$|Please be careful|name as your package|take precedence during|with strategy, WheelFile|^ *$' || true
