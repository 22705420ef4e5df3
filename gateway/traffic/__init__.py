"""LLM-traffic recording and analysis: the embedded mitmproxy, wire-format parsers, storage,
and what the traffic tells (compactions, memory calls, evidence in context, canaries).

Where a compaction is detected: `analysis.py` (`TrafficAnalyzer`); where it is logged:
`recorder.py`. mitmproxy is imported in `hub.py` alone, behind the plain-data `RawExchange`.
May import `gateway.log` and `adapters` (the loopback server helpers); nothing else of the
gateway.
"""
