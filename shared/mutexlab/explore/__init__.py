"""``mutexlab explore``: step through a protocol in the browser (session.py: the pure session;
describe.py: what the cards show; server.py: the page and its JSON API; static/: the page)."""
