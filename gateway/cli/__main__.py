"""`python -m gateway.cli …` is the `marathon` command (what the tests start as a process)."""

from gateway.cli.entry import main

raise SystemExit(main())
