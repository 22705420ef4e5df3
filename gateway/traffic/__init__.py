"""LLM-traffic recording and analysis: the embedded mitmproxy, wire-format parsers, storage,
and what the traffic tells (compactions, memory calls, evidence in context, canaries)."""
