"""The `marathon` command: argument parsing and the commands (`main.py`), and the commands
that run marathons or report across runs (`runs.py`), which runs at once and where
(`scheduling.py`: this process or a Ray cluster). The top of the house: it may import
every other part; nothing imports it.
"""
