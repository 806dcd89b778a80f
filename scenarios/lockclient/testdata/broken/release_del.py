#!/usr/bin/python3
"""Broken: releases with a plain DEL, whoever holds the key."""
from shipped import adapter


def release(self, key, token):
    return {"status": "ok"} if self.r.delete(key) else {"status": "fail"}


adapter.Lock.release = release
adapter.main()
