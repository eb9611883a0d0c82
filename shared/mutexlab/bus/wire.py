"""The wire format (docs/wire.md#wire): envelopes and step frames, pure code on bytes and dicts. For
integers and ASCII the bytes are the one-module transport's (3a6c154; tests/test_wire_format.py)."""

from __future__ import annotations

from typing import Any

import msgspec

from ..fastpath import same_but

# A message body larger than this is refused (dead-lettered) without being parsed.
MAX_BODY = 64 * 1024


class EnvelopeError(ValueError):
    """A message that is not a valid envelope for this run; the text is the dead-letter reason."""


def envelope(run_id: str, msg_id: str, sender: str, to: str, seq: int, vc: dict | None, msg: dict) -> dict:
    """A protocol message on the wire: who, where, the link sequence number, the sender's vector clock."""
    return {"run": run_id, "id": msg_id, "from": sender, "to": to, "seq": seq, "vc": vc or {}, "msg": msg}


def frame(
    run_id: str, sender: str, sends: list[tuple[str, int, str, dict, dict]], acks: dict | None = None
) -> dict:
    """The protocol part of a step's publish: its messages ``(to, seq, id, vc, msg)`` in effect order.

    One message is an envelope; several are a step frame ``{"run", "from", "msgs": [...]}`` whose
    entries ``{"to", "seq", "id", "vc" | "tick", "msg"?}`` say what differs from the entry before:
    ``tick`` is that entry's vector clock with only the sender's own entry changed (a broadcast
    ticks it once per addressee), and a missing ``msg`` is the same message (a broadcast's content
    is stored once). ``acks`` (transient delivery only, links.py): ``{addressee: n}``, the sender
    has handled the addressee's messages up to ``n``."""
    extra = {"acks": acks} if acks else {}
    if len(sends) == 1:
        to, seq, msg_id, vc, msg = sends[0]
        return {**envelope(run_id, msg_id, sender, to, seq, vc, msg), **extra}
    entries: list[dict] = []
    last_vc: dict | None = None
    last_msg: dict | None = None
    for to, seq, msg_id, vc, msg in sends:
        entry: dict[str, Any] = {"to": to, "seq": seq, "id": msg_id}
        if last_vc is not None and same_but(vc, last_vc, sender):
            entry["tick"] = vc.get(sender, 0)
        else:
            entry["vc"] = vc
        if msg != last_msg:
            entry["msg"] = msg
        last_vc, last_msg = vc, msg
        entries.append(entry)
    return {"run": run_id, "from": sender, "msgs": entries, **extra}


def frames(
    run_id: str,
    sender: str,
    sends: list[tuple[str, int, str, dict, dict]],
    acks: dict | None,
    keys: list[str],
) -> list[tuple[list[str], bytes]]:
    """A step's publishes: ``(the keys it goes to, its protocol part)`` — one ``frame`` to every
    key of ``keys`` (``<TYPE>.<dest>``) when it fits in ``MAX_BODY``, else the sends cut in order
    into frames that do, each to the keys of its own addressees and carrying ``acks`` (published in
    order on one channel: each link's messages keep their order). A receiver refuses a larger
    protocol part unread, so a step of several large messages (a program's broadcast) would be lost
    whole; one message too large alone stays one frame (``director/node.py`` refuses a program's)."""
    body = compact(frame(run_id, sender, sends, acks))
    if len(body) <= MAX_BODY or len(sends) == 1:
        to = {entry[0] for entry in sends}
        return [([k for k in keys if k.rpartition(".")[2] in to], body)]
    half = len(sends) // 2
    return frames(run_id, sender, sends[:half], acks, keys) + frames(run_id, sender, sends[half:], acks, keys)


# The wire's JSON codec: msgspec's, in C (a step frame of 49 messages decodes in 11 µs, 31 µs
# with the standard library's; tests/test_wire_codec.py holds it to ``json`` on every shape).
_encode = msgspec.json.Encoder().encode
_decode = msgspec.json.Decoder().decode


def compact(data: dict) -> bytes:
    """JSON as the wire carries it: compact, no raw newline, text as UTF-8 (not ``\\u`` escapes).
    Unlike ``json.dumps``, a float NaN or infinity is written as ``null``."""
    return _encode(data)


def loads(body: bytes | str) -> Any:
    """The JSON value of ``body``; ValueError naming the problem when it is not JSON (not UTF-8,
    malformed, nested too deep, a number out of range: a float beyond the double's, an integer of
    more than 4300 digits), or NaN or an infinity, which JSON does not have."""
    try:
        return _decode(body)
    except (msgspec.DecodeError, ValueError, RecursionError) as exc:
        raise ValueError(str(exc)[:200] or type(exc).__name__) from None


def split_step(body: bytes) -> tuple[bytes, bytes]:
    """A step's body is its protocol part (``frame``), a newline and its trace batch: the two parts,
    or the whole body for both when it has no newline (an envelope, or a trace batch, alone)."""
    cut = body.find(b"\n")
    return (body, body) if cut < 0 else (body[:cut], body[cut + 1 :])


def parse_frame(
    body: bytes, run_id: str, me: str, roster: dict[str, int], acks: dict | None = None
) -> tuple[str, list[dict]]:
    """Check a delivery's protocol part (an envelope or a step frame; the trace part after it is the
    monitor's, not parsed here): ``(sender, [envelope to me, ...])`` in link order, each envelope
    with its own ``vc`` and ``msg`` filled in. Raises EnvelopeError with the reason. With ``acks``
    (a dict), the sender's acknowledgement to ``me`` the frame carries (``frame``) is put in it:
    ``acks[sender] = n``; a malformed one is left out."""
    part = split_step(body)[0]
    if len(part) > MAX_BODY:
        raise EnvelopeError(f"oversized body: {len(part)} bytes (limit {MAX_BODY})")
    mine = _step_fast(part, run_id, me, roster, acks) if b'"msgs"' in part else None
    return mine if mine is not None else _parse(part, run_id, me, roster, acks)


def _parse(
    part: bytes, run_id: str, me: str, roster: dict[str, int], acks: dict | None
) -> tuple[str, list[dict]]:
    """``parse_frame`` on any protocol part, every problem named (EnvelopeError)."""
    try:
        data = loads(part)
    except ValueError as exc:  # not JSON, not UTF-8, nested too deep, a 5000-digit number
        raise EnvelopeError(f"not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise EnvelopeError("an envelope must be a JSON object")
    step = "msgs" in data
    missing = [k for k in (("run", "from", "msgs") if step else _ENVELOPE_KEYS) if k not in data]
    if missing:
        raise EnvelopeError(f"envelope lacks {', '.join(missing)}")
    if data["run"] != run_id:
        raise EnvelopeError(f"envelope of run {data['run']!r}, this is run {run_id!r}")
    sender = data["from"]
    if not isinstance(sender, str) or sender not in roster:
        raise EnvelopeError(f"sender {sender!r} is not a member of this run")
    _take_acks(acks, sender, data.get("acks"), me)
    if not step:
        if data["to"] != me:
            raise EnvelopeError(f"addressed to {data['to']!r}, delivered to {me}")
        _check_entry(data)
        return sender, [data]
    entries = data["msgs"]
    if not isinstance(entries, list) or not entries:
        raise EnvelopeError("a step frame's msgs must be a non-empty list")
    mine: list[dict] = []
    vc: Any = None  # the last full vector clock, and the sender's own entry since (None: unchanged)
    tick: Any = None
    msg: Any = None
    # Every entry is checked for its shape and followed for its clock and message (a later entry
    # to me may go by them); only the entries to me are checked in full (``_check_entry``).
    for n, entry in enumerate(entries, 1):
        if not isinstance(entry, dict) or "to" not in entry or "seq" not in entry or "id" not in entry:
            raise EnvelopeError(f"message {n} of the step frame is not an object with to, seq and id")
        if "vc" in entry:
            vc, tick = entry["vc"], None
        elif "tick" in entry and vc is not None:
            tick = entry["tick"]
        else:
            raise EnvelopeError(f"bad vector clock: message {n} of the step frame has none to go by")
        if "msg" in entry:
            msg = entry["msg"]
        elif msg is None:
            raise EnvelopeError(f"message {n} of the step frame has no protocol message to go by")
        if entry["to"] == me:
            mine.append(_mine(run_id, sender, me, entry["id"], entry["seq"], vc, tick, msg))
    if not mine:
        others = ", ".join(repr(str(entry["to"])) for entry in entries)
        raise EnvelopeError(f"addressed to {others}, delivered to {me}")
    return sender, mine


class _Entry(msgspec.Struct):
    """A step frame's entry as ``_step_fast`` decodes it: absent keys are UNSET, the rest any JSON."""

    to: Any
    seq: Any
    id: Any
    vc: Any = msgspec.UNSET
    tick: Any = msgspec.UNSET
    msg: Any = msgspec.UNSET


class _Step(msgspec.Struct):
    run: Any
    sender: Any = msgspec.field(name="from")
    msgs: list[_Entry] = msgspec.field(default_factory=list)
    acks: Any = None


# A broadcast's frame holds every addressee's entry, and each addressee decodes them all: typed,
# an entry is a struct rather than a dict (P = 50: 54 -> 31 µs a delivery, docs/benchmarks.md#frame-decode).
_decode_step = msgspec.json.Decoder(_Step).decode


def _step_fast(
    part: bytes, run_id: str, me: str, roster: dict[str, int], acks: dict | None
) -> tuple[str, list[dict]] | None:
    """``_parse``'s answer for a valid step frame, the same envelopes; None for anything else (an
    envelope, a malformed frame: ``_parse`` decodes it again and names its problem)."""
    try:
        data = _decode_step(part)
    except (msgspec.DecodeError, ValueError, RecursionError):
        return None
    sender, unset = data.sender, msgspec.UNSET
    if data.run != run_id or not isinstance(sender, str) or sender not in roster or not data.msgs:
        return None
    mine: list[dict] = []
    vc: Any = None
    tick: Any = None
    msg: Any = None
    for entry in data.msgs:
        if entry.vc is not unset:
            vc, tick = entry.vc, None
        elif entry.tick is not unset and vc is not None:
            tick = entry.tick
        else:
            return None
        if entry.msg is not unset:
            msg = entry.msg
        elif msg is None:
            return None
        if entry.to != me:
            continue
        try:
            mine.append(_mine(run_id, sender, me, entry.id, entry.seq, vc, tick, msg))
        except EnvelopeError:
            return None
    if not mine:
        return None
    _take_acks(acks, sender, data.acks, me)
    return sender, mine


def _mine(run_id: str, sender: str, me: str, msg_id: Any, seq: Any, vc: Any, tick: Any, msg: Any) -> dict:
    """A step frame's entry to ``me`` as an envelope of its own, checked (``_check_entry``): the
    clock it goes by with the sender's ``tick`` (None: unchanged), the message it goes by."""
    if tick is not None and (isinstance(tick, bool) or not isinstance(tick, int)):
        raise EnvelopeError(f"bad vector clock: tick {tick!r}")
    own = vc if tick is None or not isinstance(vc, dict) else {**vc, sender: tick}
    env = {"run": run_id, "id": msg_id, "from": sender, "to": me, "seq": seq, "vc": own, "msg": msg}
    _check_entry(env)
    return env


def _take_acks(acks: dict | None, sender: str, carried: Any, me: str) -> None:
    """Put the acknowledgement to ``me`` that ``carried`` (a frame's ``acks``) holds in ``acks``."""
    n = carried.get(me) if isinstance(carried, dict) else None
    if acks is not None and isinstance(n, int) and not isinstance(n, bool) and n >= 0:
        acks[sender] = n


_ENVELOPE_KEYS = ("run", "id", "from", "to", "seq", "vc", "msg")
_INTEGERS = frozenset((int, bool))  # a clock's entries (JSON gives these types exactly)


def _check_entry(data: dict) -> None:
    if not isinstance(data["id"], str):  # it becomes the trace's message id, a string
        raise EnvelopeError(f"bad message id {str(data['id'])[:40]}")
    seq = data["seq"]
    if isinstance(seq, bool) or not isinstance(seq, int) or seq < 1:
        raise EnvelopeError(f"bad sequence number {seq!r}")
    vc = data["vc"]
    if not isinstance(vc, dict) or not _INTEGERS.issuperset(map(type, vc.values())):
        raise EnvelopeError("bad vector clock")
    if not isinstance(data["msg"], dict):
        raise EnvelopeError("the protocol message must be a JSON object")
