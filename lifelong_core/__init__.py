"""Lifelong Benchmark Explorer engine.

Pure computation over a cache of per-sample predictions (models x samples). This
package never imports streamlit or plotly; only ``lifelong_core.store`` talks to
DuckDB. docs/development/architecture.md is the map of modules.
"""

__version__ = "0.1.0"
