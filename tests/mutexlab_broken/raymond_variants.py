"""A broken Raymond node (tests/test_raymond.py): the audit and the explorer must catch it."""

from mutexlab.protocols import raymond


class Impatient(raymond.RaymondNode):
    """Enters at once when asking, without waiting for the token (and forges one)."""

    def _request(self):
        self.holder = self.pid
        return self._enter()
