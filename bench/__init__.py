"""mutexlab benchmarks (issue 7): ``python -m bench.run --quick`` (see BENCHMARKS.md)."""
