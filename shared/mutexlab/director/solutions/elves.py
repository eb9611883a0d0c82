"""The elves problem, the mayor (node 0) and every elf a program (``$NODE_COMMAND``): ../solution.py."""

from ..solution import program_solution

SPEC = program_solution(__name__.rpartition(".")[2])  # this module names its problem
