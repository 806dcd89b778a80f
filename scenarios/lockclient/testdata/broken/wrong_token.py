#!/usr/bin/python3
"""Broken: replies a token other than the value it stored in the key."""
from shipped import adapter

acquire = adapter.Lock.acquire


def wrong(self, key, ttl_ms):
    reply = acquire(self, key, ttl_ms)
    if "token" in reply:
        reply["token"] = "handle-" + reply["token"][:8]
    return reply


adapter.Lock.acquire = wrong
adapter.main()
