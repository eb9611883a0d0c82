"""What a node's answer to one input is, for telling whether the same schedule gave the same answer.

An answer is what it says, not how it is spelt: a Perl hash written in another key order by another
process (its seed is per process) is the same answer. An MPI rank's message carries its program's
memory as it is (``data``, hex): a struct's padding or an array's unused tail is whatever the stack
held, which differs from run to run of one schedule; so a rank's message counts by its length, not
its bytes. A receiver whose steps depend on those bytes still answers differently, and is caught.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any


def _digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=8).hexdigest()


def _sized(output: dict[str, Any]) -> dict[str, Any]:
    body = output.get("body")
    if output.get("type") != "send" or not isinstance(body, dict) or not isinstance(body.get("data"), str):
        return output
    return {**output, "body": {**body, "data": len(body["data"])}}


def digests(outputs: list[dict[str, Any]], raw: bytes, memory_bodies: bool) -> tuple[str, ...]:
    """The answer's digest, then the others an earlier run's record may hold for the same answer:
    with every byte of its messages (records before 2026-11-29), and of its raw bytes (before
    2026-11)."""

    def said(items: list[dict[str, Any]]) -> bytes:
        return json.dumps(items, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode()

    whole = _digest(said(outputs))
    if not memory_bodies:
        return whole, whole, _digest(raw)
    return _digest(said([_sized(o) for o in outputs])), whole, _digest(raw)
