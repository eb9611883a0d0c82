"""A broken Suzuki–Kasami node (tests/test_suzuki_kasami.py): the audit and the explorer must catch it."""

from mutexlab.protocols import suzuki_kasami as sk


class Generous(sk.SuzukiKasamiNode):
    """Sends the token to a requester even while using it."""

    def on_message(self, msg):
        if msg.type == "REQUEST" and self.token is not None and self.state == "HELD":
            self.clock.receive(msg.ts)
            self.R[msg.sender] = max(self.R[msg.sender], msg.seq)
            if self.R[msg.sender] == self.token[0][msg.sender] + 1:
                return [self._send_token(msg.sender)]
            return []
        return super().on_message(msg)

    def _release(self):
        return [] if self.token is None else super()._release()
