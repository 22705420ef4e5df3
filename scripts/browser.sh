# Sourced by ./run-tests: the browser tests need Chromium. Debian's package is installed when
# missing and this shell may (root with apt-get); Playwright's own browser download is never
# used (it can't reach its CDN here, and the tests point Playwright at this build).
ensure_chromium() {
  if [ -n "${MARATHON_CHROMIUM:-}" ] || command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1; then
    return 0
  fi
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "run-tests: installing Debian's chromium for the browser tests (a minute or two)" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y chromium 2>&1 | apt_progress \
      || { echo "  updating the package lists first" >&2; apt-get update -q >/dev/null 2>&1 \
        && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium 2>&1 | apt_progress; }
    return 0
  fi
  echo "run-tests: no chromium found; install your system's chromium (or set MARATHON_CHROMIUM) for the browser tests" >&2
}

# apt-get's output as progress: how many packages it fetches and sets up (a line every tenth),
# and its errors. Fails when apt-get said E: (so the caller can update the lists and retry).
apt_progress() {
  awk '
    /newly installed/ { total = $3; print "  " total " packages to install" > "/dev/stderr" }
    /^Get:/ { got++; if (got == 1 || got % 10 == 0) print "  downloaded " got (total ? "/" total : "") > "/dev/stderr" }
    /^Setting up / { set++; if (set == 1 || set % 10 == 0) print "  set up " set (total ? "/" total : "") " (" $3 ")" > "/dev/stderr" }
    /^E: / { failed = 1; print "  " $0 > "/dev/stderr" }
    { fflush("/dev/stderr") }
    END { if (!failed && set) print "  chromium installed" > "/dev/stderr"; exit failed }
  '
}
