"""The mutex problem, every node a program (``$NODE_COMMAND``): ../solution.py."""

from ..solution import program_solution

SPEC = program_solution("mutex")
