"""mutexlab benchmarks: what BENCHMARKS.md shows, and how to reproduce it (docs/benchmarks.md)."""
