"""The self-contained HTML report of a trace (``mutexlab report``, ``--report FILE``)."""

from .html import MAX_ARROWS, build_report, write_report
from .model import build_model
from .window import WINDOW_EVENTS, Window, WindowFeed, read_window

__all__ = [
    "MAX_ARROWS",
    "WINDOW_EVENTS",
    "Window",
    "WindowFeed",
    "build_report",
    "build_model",
    "read_window",
    "write_report",
]
