"""The in-memory drivers: a seeded discrete-event simulator and a scripted replayer."""

from .engine import SimConfig, SimResult, Simulation, simulate
from .scripted import ScenarioError, replay_scenario

__all__ = ["SimConfig", "SimResult", "Simulation", "simulate", "ScenarioError", "replay_scenario"]
