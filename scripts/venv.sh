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
  "$root/.venv/bin/python" -m pip install --quiet --disable-pip-version-check -e "$root$extras" >&2
  # installing without extras leaves earlier extras in place: remember the richer install
  [ -z "$extras" ] && [ "$shash" = "$hash" ] && extras="$sextras"
  echo "$hash $extras" > "$stamp"
}
