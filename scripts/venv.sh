# Sourced by ./marathon and ./run-tests: find a Python ≥ 3.12 and build .venv from pyproject.toml.
# Re-installs only when pyproject.toml (or the requested extras) changed since the last install.

find_python() {
  local candidates=() v py
  [ -n "${PYTHON:-}" ] && candidates+=("$PYTHON")
  candidates+=(python3.13 python3.12 python3)
  if command -v pyenv >/dev/null 2>&1; then
    for v in $(pyenv versions --bare 2>/dev/null | sort -rV); do
      py=$(PYENV_VERSION="$v" pyenv which python3 2>/dev/null) && candidates+=("$py")
    done
  fi
  for py in "${candidates[@]}"; do
    if command -v "$py" >/dev/null 2>&1 && "$py" -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null; then
      command -v "$py"
      return 0
    fi
  done
  return 1
}

ensure_venv() {  # $1: extras, e.g. "[test]" or ""
  local root extras stamp hash py shash="" sextras=""
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  extras="$1"
  stamp="$root/.venv/.installed"
  hash="$(sha256sum "$root/pyproject.toml" | cut -c1-16)"
  [ -f "$stamp" ] && read -r shash sextras < "$stamp" || true
  if [ -x "$root/.venv/bin/python" ] && [ "$shash" = "$hash" ] && { [ -z "$extras" ] || [ "$sextras" = "$extras" ]; }; then
    return 0
  fi
  if ! [ -x "$root/.venv/bin/python" ] || ! "$root/.venv/bin/python" -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null; then
    py=$(find_python) || { echo "marathonbench needs Python >= 3.12; none found (set PYTHON=/path/to/python3.12)" >&2; return 1; }
    echo "setting up .venv with $py ($("$py" --version 2>&1))" >&2
    rm -rf "$root/.venv"
    "$py" -m venv "$root/.venv"
  fi
  pip_install "$root" "$root$extras"
  # installing without extras leaves earlier extras in place: remember the richer install
  [ -z "$extras" ] && [ "$shash" = "$hash" ] && extras="$sextras"
  echo "$hash $extras" > "$stamp"
}

# pip's output, as progress a person (or a CI log) can follow: a count of the packages fetched
# (redrawn in place on a terminal, every tenth elsewhere), then the install, and pip's errors
# as they come. $1: 1 when stderr is a terminal.
pip_progress() {
  awk -v tty="${1:-0}" '
    function say(text) {
      if (tty) { printf "\r\033[K%s", text > "/dev/stderr" } else { print text > "/dev/stderr" }
      fflush("/dev/stderr")
    }
    /^Collecting / {
      n++; name = $2; sub(/[<>=!~;\[(].*/, "", name)
      if (tty || n == 1 || n % 10 == 0) say("  fetching packages: " n " (" name ")")
    }
    /^Building (wheels for collected packages|editable for)/ && !built {
      built = 1
      if (tty) printf "\n" > "/dev/stderr"
      tty = 0; say("  fetched " n " packages; building marathonbench (a few seconds)")
    }
    /^Installing collected packages:/ {
      count = split(substr($0, index($0, ":") + 1), names, ",")
      if (tty) printf "\n" > "/dev/stderr"
      tty = 0; say("  installing " count " packages into .venv")
    }
    /^Successfully installed/ { say("  installed") }
    /^ERROR|^error:/ { if (tty) printf "\n" > "/dev/stderr"; tty = 0; say($0) }
  '
}

# pip install $2 into $1/.venv, saying what it does (pip_progress); on failure, the end of
# pip's output and where the whole of it is kept.
pip_install() {
  local root="$1" target="$2" log started=$SECONDS tty=0
  log="$(mktemp "${TMPDIR:-/tmp}/marathonbench-pip.XXXXXX")"
  [ -t 2 ] && tty=1
  echo "installing marathonbench and its packages into .venv" >&2
  # unbuffered: into a pipe pip's output would come in blocks, the install's start with its end
  { local rc=0; PYTHONUNBUFFERED=1 "$root/.venv/bin/python" -m pip install --disable-pip-version-check --progress-bar off \
      -e "$target" || rc=$?; echo "$rc" > "$log.rc"; } 2>&1 | tee "$log" | pip_progress "$tty"
  if [ "$(cat "$log.rc")" != 0 ]; then
    echo "pip failed; the end of its output (all of it: $log):" >&2
    tail -n 25 "$log" >&2
    rm -f "$log.rc"
    return 1
  fi
  echo "  .venv ready in $((SECONDS - started)) s" >&2
  rm -f "$log" "$log.rc"
}
