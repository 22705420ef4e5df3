"""The `marathon` command's entry point, kept light: Ctrl-C in the first second — while Python
still imports the command's modules — ends as a Ctrl-C later does, with the command's own
message and exit 130, never a `KeyboardInterrupt` traceback.

What a caller may rely on: `main` returns the command's exit code; what a stopped command
left behind is worded once (`stopping.interrupted_message`).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from gateway.cli.stopping import interrupted_message


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        from gateway.cli.main import main as run_command  # the heavy imports

        return run_command(args)
    except KeyboardInterrupt:  # before the command's own handling began (or after it ended)
        command = next((a for a in args if not a.startswith("-")), None)
        print(f"\n{interrupted_message(command, '--fresh' in args)}", file=sys.stderr)
        return 130
