"""Runs on a Ray cluster: one run = one Ray task on a worker node, its log streamed back to
the driver's recordings folder (docs/scale-out.md). Ray is an optional extra (`.[ray]`);
nothing here imports it until a run asks for it."""
