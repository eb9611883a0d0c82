"""The self-contained HTML report of a trace (``mutexlab report``, ``--report FILE``)."""

from .html import MAX_ARROWS, build_report, write_report
from .model import build_model

__all__ = ["MAX_ARROWS", "build_report", "build_model", "write_report"]
