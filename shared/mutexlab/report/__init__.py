"""The self-contained HTML report of a trace (``mutexlab report``, ``--report FILE``)."""

from .html import MAX_ARROWS, build_report
from .model import build_model
from .options import add_report_argument, write_report, write_report_if_asked

__all__ = ["MAX_ARROWS", "build_report", "build_model", "add_report_argument", "write_report",
           "write_report_if_asked"]
