#!/usr/bin/env bash
# `make serve` and `make demo`: the site as on a server (README "Deploy"). Applies migrations,
# collects the static files (whitenoise serves them), then runs gunicorn and, beside it, one task
# worker (`manage.py db_worker`) so that judge runs queued on the web execute.
# Ctrl-C or TERM stops both; when either exits on its own, the other is stopped too.
# Usage: config/serve.sh [PYTHON], default .venv/bin/python; HOST, PORT, WEB_WORKERS, WEB_THREADS,
# FORWARDED_ALLOW_IPS and LOG_LEVEL from the environment.
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
export LOG_LEVEL=${LOG_LEVEL:-INFO}
host=${HOST:-127.0.0.1}
port=${PORT:-8000}

"$python" manage.py migrate --noinput
"$python" manage.py collectstatic --noinput --verbosity 0

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
set -m
"$python" manage.py db_worker &
worker_pid=$!
# No control socket: its default path, ~/.gunicorn/gunicorn.ctl, would be shared by every gunicorn of the user.
"$python" -m gunicorn config.wsgi \
  --bind "$host:$port" \
  --workers "${WEB_WORKERS:-$(( $(nproc) * 2 + 1 ))}" --threads "${WEB_THREADS:-2}" \
  --timeout 60 --graceful-timeout 25 --keep-alive 5 \
  --access-logfile - \
  --forwarded-allow-ips "${FORWARDED_ALLOW_IPS:-127.0.0.1,::1}" \
  --no-control-socket &
web_pid=$!
set +m
echo "Serving on http://$host:$port/ with a task worker beside it (Ctrl-C stops both)"

while alive "$web_pid" && alive "$worker_pid"; do sleep 1; done
if alive "$web_pid"; then echo "The task worker stopped; stopping gunicorn too." >&2; else echo "Gunicorn stopped; stopping the task worker too." >&2; fi
stop
exit 1
