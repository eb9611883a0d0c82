"""Pięciu filozofów — strażnicy widelców i hierarchia zasobów (zadanie z Systemów Rozproszonych).

Każdy widelec ma strażnika: tego z dwóch sąsiadów, który ma mniejszy numer. Głodny filozof prosi
najpierw o widelec o mniejszym numerze, a dopiero gdy go dostanie — o drugi (hierarchia zasobów,
więc nie ma zakleszczenia). Strażnik daje widelec, gdy jest wolny, inaczej wpisuje proszącego do
kolejki (``deque``); o swój widelec strażnik nie pisze do siebie, tylko bierze go od razu.

Co filozof trzyma, to ``enum.Flag``: ``Strona.LEWY | Strona.PRAWY``. Geometria stołu to zamrożona
dataclass z ``__post_init__``, która liczy strażników; ``functools.cache`` na metodzie ``sasiad``.

Wstawiony błąd (stała modułu, zmieniana w testach):

* KAZDY_WYSTARCZY = True: ``_moge_jesc`` sprawdza ``self.mam & Strona.OBA`` (którykolwiek widelec)
  zamiast ``== Strona.OBA`` — filozof je z jednym widelcem.
"""

from __future__ import annotations

import functools
from collections import deque
from dataclasses import dataclass, field
from enum import Flag, auto
from typing import Literal

from mutexlab.protocols.kit import (
    EATING,
    HUNGRY,
    THINKING,
    Message,
    Philosopher,
    Send,
    on,
    philosopher_table,
    philosophers_algorithm,
)

NAZWA = "o16-phil-polski"
KAZDY_WYSTARCZY = False


class Strona(Flag):
    LEWY = auto()
    PRAWY = auto()
    OBA = LEWY | PRAWY


@dataclass(frozen=True)
class Stol:
    """Stół N filozofów: kto pilnuje którego widelca (liczone raz, w ``__post_init__``)."""

    n: int
    straznicy: tuple[int, ...] = field(init=False)

    def __post_init__(self) -> None:
        if self.n < 2:
            raise ValueError("przy stole musi siedzieć co najmniej dwóch filozofów")
        # widelec w (1..N) leży między filozofem w−1 (dla 1: N) a filozofem w
        object.__setattr__(
            self, "straznicy", tuple(min(w, (w - 2) % self.n + 1) for w in range(1, self.n + 1))
        )

    def straznik(self, widelec: int) -> int:
        return self.straznicy[widelec - 1]


class Prosze(Message):
    type: Literal["PROSZE"] = "PROSZE"
    widelec: int


class Daje(Message):
    type: Literal["DAJE"] = "DAJE"
    widelec: int


class Oddaje(Message):
    type: Literal["ODDAJE"] = "ODDAJE"
    widelec: int


STRAZNIK = {
    "PROSZE": on("strażnik: wolny — DAJE, zajęty — do kolejki", "_na_prosze"),
    "ODDAJE": on("strażnik: następny z kolejki dostaje widelec", "_na_oddaje", to=[EATING]),
}


class Filozof(Philosopher):
    TABLE = philosopher_table(
        hungry="proś o widelec o mniejszym numerze → HUNGRY",
        done="oddaj oba widelce → THINKING",
        rows={
            THINKING: STRAZNIK,
            HUNGRY: {
                **STRAZNIK,
                "DAJE": on("mam widelec; oba: jem, inaczej proszę o drugi", "_na_daje", to=[EATING]),
            },
            EATING: STRAZNIK,
        },
        never="DAJE odpowiada na moje PROSZE, a proszę tylko głodny",
    )

    def __init__(self, pid: int, n: int, meals: int = 0, clock: int = 0) -> None:
        super().__init__(pid, n, meals, clock)
        self.stol = Stol(n)
        self.mam = Strona(0)
        self.zajety: dict[int, int | None] = {
            w: None for w in (self.left, self.right) if self.stol.straznik(w) == pid
        }
        self.kolejka: dict[int, deque[int]] = {w: deque() for w in self.zajety}

    @functools.cache  # noqa: B019 - the style under test: a cached method
    def sasiad(self, widelec: int) -> int:
        """Drugi filozof przy widelcu ``widelec``."""
        return (widelec - 2) % self.n + 1 if widelec == self.left else widelec

    def _strona(self, widelec: int) -> Strona:
        return Strona.LEWY if widelec == self.left else Strona.PRAWY

    def _wyslij(self, do: int, rodzaj: type[Message], widelec: int) -> Send:
        return Send(do, rodzaj(sender=self.pid, ts=self.clock.tick(), widelec=widelec))

    @property
    def _moge_jesc(self) -> bool:
        if KAZDY_WYSTARCZY:
            return bool(self.mam & Strona.OBA)
        return self.mam == Strona.OBA

    # -- jako filozof ------------------------------------------------------------------------
    def _hungry(self) -> list:
        return self._popros(min(self.left, self.right))

    def _popros(self, widelec: int) -> list:
        straznik = self.stol.straznik(widelec)
        if straznik != self.pid:
            return [self._wyslij(straznik, Prosze, widelec)]
        if self.zajety[widelec] is None:  # mój własny widelec: biorę od razu
            self.zajety[widelec] = self.pid
            return self._dostalem(widelec)
        self.kolejka[widelec].append(self.pid)
        return []

    def _dostalem(self, widelec: int) -> list:
        self.mam |= self._strona(widelec)
        if self._moge_jesc:
            return [self.take(self.left), self.take(self.right), *self._eat()]
        return self._popros(max(self.left, self.right))

    def _na_daje(self, msg: Daje) -> list:
        self.clock.receive(msg.ts)
        return self._dostalem(msg.widelec)

    def _done(self) -> list:
        wynik = [self.put(self.left), self.put(self.right)]
        self.mam = Strona(0)
        for widelec in (self.left, self.right):
            straznik = self.stol.straznik(widelec)
            wynik += (
                self._zwolnij(widelec) if straznik == self.pid else [self._wyslij(straznik, Oddaje, widelec)]
            )
        return wynik

    # -- jako strażnik -----------------------------------------------------------------------
    def _na_prosze(self, msg: Prosze) -> list:
        self.clock.receive(msg.ts)
        if self.zajety[msg.widelec] is None:
            self.zajety[msg.widelec] = msg.sender
            return [self._wyslij(msg.sender, Daje, msg.widelec)]
        self.kolejka[msg.widelec].append(msg.sender)
        return []

    def _na_oddaje(self, msg: Oddaje) -> list:
        self.clock.receive(msg.ts)
        return self._zwolnij(msg.widelec)

    def _zwolnij(self, widelec: int) -> list:
        self.zajety[widelec] = None
        if not self.kolejka[widelec]:
            return []
        nastepny = self.kolejka[widelec].popleft()
        self.zajety[widelec] = nastepny
        return self._dostalem(widelec) if nastepny == self.pid else [self._wyslij(nastepny, Daje, widelec)]

    def waiting_for(self) -> dict[str, list[int]]:
        if self.state is not HUNGRY:
            return {}
        brak = [w for w in (self.left, self.right) if not self.mam & self._strona(w)]
        return {"DAJE": [self.stol.straznik(w) for w in brak if self.stol.straznik(w) != self.pid]}


SPEC = philosophers_algorithm(
    NAZWA,
    "filozofowie: strażnik przy każdym widelcu, widelce brane w kolejności numerów",
    Filozof,
    Prosze,
    Daje,
    Oddaje,
)
