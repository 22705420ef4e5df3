#!/bin/sh
# Runs the clean control and every mechanism of the held-out set into /tmp/heldout-recordings,
# each its own run id (heldout-<mechanism>), from a fresh state. Then checks the scores only:
# targeted questions wrong, the others right (check_scores.py never reads the autopsy).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
MAIN=${MARATHON_MAIN:-/work/main}
PY="$MAIN/.venv/bin/python"
cd "$MAIN" || exit 2
status=0
for cfg in clean ghost_ack value_swap dedupe_noop evict_archive search_skip truncate_results \
           reply_rewrite old_first skip_delete clobber_merge forget_overreach decoy_first; do
  echo "== $cfg"
  "$PY" -m gateway.cli run "$HERE/configs/$cfg.jsonc" --fresh 2>&1 | grep -E "completed|failed|error|interrupted" || status=1
done
"$PY" "$HERE/check_scores.py" || status=1
exit $status
