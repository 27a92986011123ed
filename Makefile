# Set-up and everyday commands. `make demo` and `make test` are all a new clone needs.

# The first Python >= 3.12 found on PATH or among pyenv's installs.
PYTHON ?= $(shell for p in python3.13 python3.12 python3 $$HOME/.pyenv/versions/3.13*/bin/python3 $$HOME/.pyenv/versions/3.12*/bin/python3 /usr/local/bin/python3.1[2-9] /usr/bin/python3.1[2-9]; do \
	  if "$$p" -c 'import sys; sys.exit(sys.version_info < (3, 12))' >/dev/null 2>&1; then command -v "$$p" || echo "$$p"; break; fi; done)
VENV ?= .venv
PY := $(VENV)/bin/python
HOST ?= 127.0.0.1
PORT ?= 8000
# The demo runs with DEBUG on so that it needs no SECRET_KEY and serves its own static files.
DEMO_ENV := DEBUG=1
TEST_ENV := SECRET_KEY=test-only-not-secret DEBUG=0

.PHONY: demo test test-only install serve migrate bench check-python clean

check-python:
	@if [ -z "$(PYTHON)" ]; then echo "No Python >= 3.12 found on PATH or in ~/.pyenv/versions; install one or run 'make PYTHON=/path/to/python3.12 ...'" >&2; exit 1; fi

$(VENV)/.installed: pyproject.toml constraints.txt | check-python
	@echo "Using $(PYTHON) ($$($(PYTHON) --version))"
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -c constraints.txt -e ".[dev]"
	touch $@

install: $(VENV)/.installed

migrate: install
	$(DEMO_ENV) $(PY) manage.py migrate --noinput

demo: install
	$(DEMO_ENV) $(PY) manage.py migrate --noinput
	$(DEMO_ENV) $(PY) manage.py load_demo
	@echo "Serving on http://$(HOST):$(PORT)/ (Ctrl-C stops)"
	$(DEMO_ENV) $(PY) manage.py runserver --noreload $(HOST):$(PORT)

test: install test-only

test-only:
	$(TEST_ENV) $(PY) -m pytest -q

bench: install
	$(DEMO_ENV) $(PY) bench/import.py ../shared/wlc-sample

clean:
	rm -rf $(VENV) db.sqlite3 db.sqlite3-wal db.sqlite3-shm
