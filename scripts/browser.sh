# Sourced by ./run-tests: the browser tests need Chromium. Debian's package is installed when
# missing and this shell may (root with apt-get); Playwright's own browser download is never
# used (it can't reach its CDN here, and the tests point Playwright at this build).
ensure_chromium() {
  if [ -n "${MARATHON_CHROMIUM:-}" ] || command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1; then
    return 0
  fi
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "run-tests: installing Debian's chromium for the browser tests" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null 2>&1 \
      || { apt-get update -q >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null; }
    return 0
  fi
  echo "run-tests: no chromium found; install your system's chromium (or set MARATHON_CHROMIUM) for the browser tests" >&2
}
