#!/usr/bin/env bash
# `make serve` and `make demo`: the site as on a server (README "Deploy"). Applies migrations,
# collects the static files (whitenoise serves them), then runs gunicorn and, beside it, one task
# worker (`manage.py db_worker`) so that judge runs queued on the web execute.
# The worker is supervised: when it dies, the site stays up and another worker starts (after a
# pause that grows to 30 s while workers keep dying within a minute); the new worker marks the judge
# run the dead one was executing as interrupted. Ctrl-C or TERM stops both; when gunicorn exits on
# its own, the worker is stopped too.
# Usage: config/serve.sh [PYTHON], default .venv/bin/python; HOST, PORT, WEB_WORKERS, WEB_THREADS,
# FORWARDED_ALLOW_IPS and LOG_LEVEL from the environment. DEMO=1 (`make demo`) keeps the start-up
# quiet (no migration list, no gunicorn boot lines) and ends with the URL and the demo's logins.
set -euo pipefail
cd "$(dirname "$0")/.."
python=${1:-.venv/bin/python}

if [ -z "${SECRET_KEY:-}" ]; then
  echo "SECRET_KEY is not set: the server signs sessions with it. Set a long random value, e.g." >&2
  echo "  export SECRET_KEY=\"\$(python3 -c 'import secrets; print(secrets.token_urlsafe(50))')\"" >&2
  exit 2
fi
# Django's debug pages show settings and local variables to whoever meets an error.
export DEBUG=0
demo=${DEMO:-0}
if [ "$demo" = 1 ]; then export LOG_LEVEL=${LOG_LEVEL:-WARNING}; else export LOG_LEVEL=${LOG_LEVEL:-INFO}; fi
gunicorn_log_level=$(echo "$LOG_LEVEL" | tr '[:upper:]' '[:lower:]')
host=${HOST:-127.0.0.1}
port=${PORT:-8000}

# Collecting the static files (hashing and compressing them, about 3 s) touches no database, so it
# runs beside the migration. `make demo` has migrated already (its demo-data step), so the demo only
# collects.
"$python" manage.py collectstatic --noinput --verbosity 0 &
static_pid=$!
if [ "$demo" != 1 ]; then
  if ! "$python" manage.py migrate --noinput; then
    wait "$static_pid" || true
    exit 1
  fi
fi
if ! wait "$static_pid"; then
  echo "collectstatic failed: see the lines above" >&2
  exit 1
fi

web_pid=""
worker_pid=""
alive() { [ -n "$1" ] && kill -0 "$1" 2>/dev/null; }
stop() {
  trap '' INT TERM  # a second signal (a process-group kill also reaches make) must not cut the stop short
  for pid in "$web_pid" "$worker_pid"; do alive "$pid" && kill -TERM "$pid" 2>/dev/null; done
  # Gunicorn finishes the requests in flight and the worker its current task, within 30 s.
  for _ in $(seq 1 30); do
    if ! alive "$web_pid" && ! alive "$worker_pid"; then return 0; fi
    sleep 1
  done
  for pid in "$web_pid" "$worker_pid"; do alive "$pid" && kill -KILL "$pid" 2>/dev/null; done
  return 0
}
trap 'stop; exit 0' INT TERM

# Job control puts each child in its own process group: Ctrl-C reaches this script alone, which
# stops the children once and gracefully (a second signal would make the worker drop its task).
worker_started=0
start_worker() {
  set -m
  "$python" manage.py db_worker &
  worker_pid=$!
  set +m
  worker_started=$SECONDS
}
start_worker
set -m
# No control socket: its default path, ~/.gunicorn/gunicorn.ctl, would be shared by every gunicorn of the user.
# --preload: the application (config/wsgi.py imports every view through the URLconf) is loaded once,
# before the workers fork, so that they share its pages instead of each importing its own copy
# (bench/serve_memory.py measures the proportional set size; config/wsgi.py opens no connection).
"$python" -m gunicorn config.wsgi \
  --bind "$host:$port" \
  --workers "${WEB_WORKERS:-$(( $(nproc) * 2 + 1 ))}" --threads "${WEB_THREADS:-2}" \
  --timeout 60 --graceful-timeout 25 --keep-alive 5 \
  --access-logfile - --log-level "$gunicorn_log_level" \
  --forwarded-allow-ips "${FORWARDED_ALLOW_IPS:-127.0.0.1,::1}" \
  --preload --no-control-socket &
web_pid=$!
set +m
# The address is printed once the server answers, so that it is the last thing on the screen.
for _ in $(seq 1 120); do
  alive "$web_pid" || break
  "$python" -c 'import socket, sys; socket.create_connection((sys.argv[1], int(sys.argv[2])), 1).close()' "$host" "$port" 2>/dev/null && break
  sleep 0.5
done
echo "Serving on http://$host:$port/ with a task worker beside it (Ctrl-C stops both)"
if [ "$demo" = 1 ]; then "$python" manage.py load_demo --logins; fi

pause=1
while alive "$web_pid"; do
  if ! alive "$worker_pid"; then
    status=0
    wait "$worker_pid" 2>/dev/null || status=$?
    # A worker that keeps dying soon after its start waits longer each time, up to 30 s.
    if (( SECONDS - worker_started < 60 )); then pause=$(( pause * 2 > 30 ? 30 : pause * 2 )); else pause=1; fi
    echo "The task worker (pid $worker_pid) stopped with status $status; the site stays up, another worker starts in $pause s." >&2
    for _ in $(seq 1 "$pause"); do alive "$web_pid" && sleep 1; done
    alive "$web_pid" && start_worker
  fi
  sleep 1
done
echo "Gunicorn stopped; stopping the task worker too." >&2
stop
exit 1
