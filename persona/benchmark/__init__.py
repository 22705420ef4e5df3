"""The benchmark format (design §3): benchmark folders and distractor pools as typed data.

    errors.py      `BenchmarkErrors`: every problem with file and line
    directives.py  the MarathonMemBench JavaScript subset, parsed and never executed
    scale.py       the `scale` settings (rungs, pool, budgets, target)
    model.py       the frozen data: facts files, phases, questions, the `Benchmark`
    pool.py        a distractor pool's folder and settings
    loader.py      `load_benchmark`: a folder → a validated `Benchmark`
    screening.py   `load_pool`: a pool loaded and screened against the evidence
    ladder.py      `apply_rung` / `benchmark_for`: the benchmark as played on a rung
    longmemeval.py an importer: LongMemEval instances → benchmark folders

May import `persona.terms` and `persona.phrases`; never the drivers or grading.
"""
