"""The text-stamp Ricart–Agrawala (``ricart_agrawala_text_stamps``) that *wrongly* declares
Ricart–Agrawala's reductions for itself: the clock shift is not sound for code that compares
timestamps as text, so the reduced search never meets the stamps it mishandles and passes.
``check --cross-check`` must report the disagreement (exit 4)."""

from dataclasses import replace

from mutexlab.protocols import ricart_agrawala, ricart_agrawala_reductions
from mutexlab_broken.ricart_agrawala_text_stamps import TextStampNode, make_setup

SPEC = replace(
    ricart_agrawala.SPEC,
    make_setup=make_setup,
    reductions=ricart_agrawala_reductions.REDUCTIONS.only(TextStampNode),  # wrong on purpose
)
