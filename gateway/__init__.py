"""The gateway: runner, run log, analysis, reports and the `marathon` CLI."""

__version__ = "0.1.0"
