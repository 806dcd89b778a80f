#!/usr/bin/python3
"""lockcheck adapter for redis-py: the reference for the adapter protocol.

lockcheck starts one process per logical client and speaks JSON lines on
stdin/stdout (docs/DESIGN.md, "The adapter protocol", version 1): one
request, then one reply. Diagnostics go to stderr, which lockcheck keeps in
a file.

Run it with Debian's interpreter, which sees Debian's python3-redis:

    lockcheck run --client 'external:/usr/bin/python3 adapters/python/redis_py_adapter.py'

Modes (--mode):
  native  SET NX PX / SET IFEQ PX / DELIFEQ (Valkey 9.0+), sent with
          execute_command: redis-py 4.3.4 has no method for IFEQ or DELIFEQ.
  lua     SET NX PX, then the Redis-era compare-and-PEXPIRE and
          compare-and-DEL scripts (redis-py's Script: EVALSHA, EVAL on
          NOSCRIPT); runs on any server with Lua. Standalone and Sentinel.
  fenced  native, with a fence drawn in the acquire's transaction (MULTI,
          SET NX PX, INCR of the key's fence counter, EXEC) and returned
          as "fence": lockcheck then judges it as its fenced client.
  lock    redis-py's own redis.lock.Lock, as its users call it: acquire
          with blocking=False and the token lockcheck draws, extend with
          replace_ttl, release; LockError (LockNotOwnedError among them)
          is fail. Lock.release forgets its token before it sends the
          script, so a release lost to a broken connection is unknown here
          and cannot be retried by the library's user: the lock stays
          until its lease ends.

Bugs (--bug, for lockcheck's own specs: a broken adapter the default gate
must catch, with the same protocol as a correct one):
  release-ignores-reply  the release reports done whatever DELIFEQ answered.
  extend-blind           the extend is PEXPIRE without comparing the token.

Topologies: standalone and replicated (the first address, the primary),
sentinel (redis.sentinel.Sentinel on the sentinels' addresses), cluster
(redis.cluster.RedisCluster), and redlock: independent primaries, one
redis.Redis each, locked by the Redlock algorithm (below) in the native or
lua mode's commands. Servers in containers announce container
addresses (Sentinel's master address, CLUSTER SLOTS, MOVED); the init
message's "addr_map" {internal: host} translates them. redis-py has
`address_remap` for RedisCluster only from 5.0 on; on older versions this
adapter subclasses NodesManager to remap where connections are made.

Redlock: a new token set with SET NX PX on every node in turn, each call
bounded by a fifth of the call's timeout; held when a majority said OK and
the lease left after the time spent and the clocks' drift (TTL/100 + 2 ms)
is positive; otherwise the token is deleted on every node and the acquire
fails. Extend and release run on every node and need a majority.

Outcomes: a reply from the server decides ok or fail (an error reply is fail
with its text); a timeout or a broken connection is unknown, because the
command may have run. No call is retried behind lockcheck's back: on a
cluster, redis-py 4.3.4's RedisCluster sends a command again when its reply
timed out (0.25 s later, up to 5 times), and a SET NX sent again finds the
lock its first copy took; the native and lua modes' connections end such a
command with ReplyLost instead. The lock mode keeps redis-py's own
behaviour, which is what its users get (docs/report-card.md, "redis-py's
Lock on a cluster").
"""

import argparse
import inspect
import json
import secrets
import sys
import time
import traceback

import redis
import redis.cluster
import redis.connection
import redis.exceptions
import redis.lock
import redis.sentinel
from redis.exceptions import ConnectionError, RedisError, ResponseError, TimeoutError

EXTEND_LUA = (
    'if redis.call("GET", KEYS[1]) == ARGV[1] then '
    'return redis.call("PEXPIRE", KEYS[1], ARGV[2]) else return 0 end'
)
RELEASE_LUA = (
    'if redis.call("GET", KEYS[1]) == ARGV[1] then '
    'return redis.call("DEL", KEYS[1]) else return 0 end'
)


# The token of the acquire under way: an acquire with no reply in time may
# hold the lock with it, so its unknown reply names it.
pending = {"token": None}


def new_token():
    pending["token"] = secrets.token_hex(20)
    return pending["token"]


def log(*args):
    print("redis_py_adapter:", *args, file=sys.stderr, flush=True)


def split_addr(addr):
    host, _, port = addr.rpartition(":")
    return host, int(port)


class AddrMap:
    """Translates announced (container) addresses into host addresses."""

    def __init__(self, mapping):
        self.mapping = dict(mapping or {})

    def __call__(self, host_port):
        host, port = host_port
        mapped = self.mapping.get(f"{host}:{port}")
        if mapped is None:
            return host, int(port)
        log(f"connect {mapped} for announced {host}:{port}")
        return split_addr(mapped)


class ReplyLost(RedisError):
    """A lock command went out and its reply did not come (a timeout, a
    broken connection): it may have run. Not a ConnectionError or a
    TimeoutError, which RedisCluster answers by sending the command again."""


# The commands of this adapter's own lock calls: only their lost replies
# are ReplyLost; the cluster's own queries (CLUSTER SLOTS) keep redis-py's
# retries, which run nothing twice.
LOCK_COMMANDS = {"SET", "DELIFEQ", "EVALSHA", "EVAL"}


class SentOnce(redis.connection.Connection):
    """A connection on which a lock command whose reply is lost raises
    ReplyLost, so that RedisCluster does not send it again."""

    def send_command(self, *args, **kwargs):
        self.last_command = str(args[0]).upper() if args else ""
        return super().send_command(*args, **kwargs)

    def read_response(self, *args, **kwargs):
        try:
            return super().read_response(*args, **kwargs)
        except (ConnectionError, TimeoutError) as e:
            if getattr(self, "last_command", "") in LOCK_COMMANDS:
                raise ReplyLost(f"{type(e).__name__}: {e}") from e
            raise


def remapping_sentinel(remap):
    class MappedSentinel(redis.sentinel.Sentinel):
        # master_for's pool asks discover_master for every new connection,
        # so a failover is followed, through the map.
        def discover_master(self, service_name):
            return remap(super().discover_master(service_name))

    return MappedSentinel


def cluster_nodes_manager(remap, connection_class):
    class Nodes(redis.cluster.NodesManager):
        # Nodes keep the names the cluster announces (slots and MOVED refer
        # to them); only the connection goes to the mapped address (remap,
        # where redis-py has no address_remap), of connection_class if set.
        def create_redis_node(self, host, port, **kwargs):
            if remap is not None:
                host, port = remap((host, port))
            r = super().create_redis_node(host, port, **kwargs)
            if connection_class is not None:
                r.connection_pool.connection_class = connection_class
            return r

    return Nodes


def connect(req, mode="native"):
    kind = req.get("topology", "standalone")
    addrs = req.get("addrs") or []
    if not addrs:
        raise ValueError("init has no addrs")
    remap = AddrMap(req.get("addr_map"))
    timeout = req.get("timeout_ms", 1000) / 1000.0
    common = {"socket_timeout": timeout, "socket_connect_timeout": timeout}
    if kind in ("standalone", "replicated"):
        host, port = remap(split_addr(addrs[0]))
        return redis.Redis(host=host, port=port, **common)
    if kind == "sentinel":
        master_set = req.get("master_set") or "mymaster"
        sentinel = remapping_sentinel(remap)(
            [split_addr(a) for a in addrs], sentinel_kwargs=dict(common), **common
        )
        return sentinel.master_for(master_set, **common)
    if kind == "redlock":
        node = dict(common, socket_timeout=timeout / 5, socket_connect_timeout=timeout / 5)
        return [redis.Redis(*remap(split_addr(a)), **node) for a in addrs]
    if kind == "cluster":
        nodes = [redis.cluster.ClusterNode(*split_addr(a)) for a in addrs]
        # One attempt of RedisCluster's outer loop (a CLUSTERDOWN is not
        # sent again); its inner resend of a lost reply is SentOnce's.
        opts = dict(startup_nodes=nodes, cluster_error_retry_attempts=1, **common)
        if "address_remap" in inspect.signature(redis.cluster.RedisCluster.__init__).parameters:
            opts["address_remap"], remap = remap, None
        saved = redis.cluster.NodesManager
        redis.cluster.NodesManager = cluster_nodes_manager(remap, None if mode == "lock" else SentOnce)
        try:
            return redis.cluster.RedisCluster(**opts)
        finally:
            redis.cluster.NodesManager = saved
    raise ValueError(f"unknown topology {kind!r}")


def fence_key(key):
    """The key's fence counter, in the key's hash slot (as lockcheck's own
    fenced client names it)."""
    i = key.find("{")
    if i >= 0:
        j = key.find("}", i + 1)
        if j > i + 1:
            return "fence:" + key[i : j + 1]
    return "fence:{" + key + "}"


class Lock:
    def __init__(self, client, mode):
        self.r = client
        self.mode = mode
        if mode == "lua":
            self.extend_script = client.register_script(EXTEND_LUA)
            self.release_script = client.register_script(RELEASE_LUA)

    def acquire(self, key, ttl_ms):
        token = new_token()  # new for every acquisition
        if self.mode == "fenced":
            pipe = self.r.pipeline(transaction=True)
            pipe.set(key, token, nx=True, px=ttl_ms)
            pipe.incr(fence_key(key))
            held, fence = pipe.execute()
            if held:
                return {"status": "ok", "token": token, "fence": fence}
            return {"status": "fail"}
        if self.r.set(key, token, nx=True, px=ttl_ms):
            return {"status": "ok", "token": token}
        return {"status": "fail"}

    def extend(self, key, token, ttl_ms):
        if self.mode == "lua":
            done = self.extend_script(keys=[key], args=[token, ttl_ms]) == 1
        else:
            done = bool(self.r.execute_command("SET", key, token, "IFEQ", token, "PX", ttl_ms))
        return {"status": "ok"} if done else {"status": "fail"}

    def release(self, key, token):
        if self.mode == "lua":
            n = self.release_script(keys=[key], args=[token])
        else:
            n = self.r.execute_command("DELIFEQ", key, token)
        return {"status": "ok"} if n == 1 else {"status": "fail"}


class Redlock:
    """The Redlock algorithm over independent primaries, with Lock's
    commands (native or lua) on each."""

    def __init__(self, clients, mode):
        if mode not in ("native", "lua"):
            raise ValueError(f"mode {mode!r} on a redlock topology: choose native or lua")
        self.nodes = [Lock(c, mode) for c in clients]
        self.quorum = len(clients) // 2 + 1

    def each(self, call):
        """Runs call on every node; counts the OKs and the nodes that did
        not answer (a timeout, a broken connection), and keeps the first
        error reply, which a refusal then reports."""
        ok = silent = 0
        self.error = None
        for n in self.nodes:
            try:
                if call(n)["status"] == "ok":
                    ok += 1
            except (ConnectionError, TimeoutError):
                silent += 1
            except RedisError as e:
                self.error = self.error or str(e)
        return ok, silent

    def refused(self):
        """A refusal, with the first error reply when a node gave one."""
        return {"status": "fail", "error": self.error} if self.error else {"status": "fail"}

    def acquire(self, key, ttl_ms):
        token = new_token()
        start = time.monotonic()
        ok, _ = self.each(lambda n: {"status": "ok"} if n.r.set(key, token, nx=True, px=ttl_ms) else {"status": "fail"})
        validity = ttl_ms - (time.monotonic() - start) * 1000 - (ttl_ms / 100 + 2)
        if ok >= self.quorum and validity > 0:
            return {"status": "ok", "token": token}
        reply = self.refused()
        self.each(lambda n: n.release(key, token))
        return reply

    def extend(self, key, token, ttl_ms):
        start = time.monotonic()
        ok, silent = self.each(lambda n: n.extend(key, token, ttl_ms))
        validity = ttl_ms - (time.monotonic() - start) * 1000 - (ttl_ms / 100 + 2)
        if ok >= self.quorum and validity > 0:
            return {"status": "ok"}
        if ok < self.quorum and ok + silent >= self.quorum:
            return {"status": "unknown"}
        return self.refused()

    def release(self, key, token):
        ok, silent = self.each(lambda n: n.release(key, token))
        if ok >= self.quorum:
            return {"status": "ok"}
        return {"status": "unknown"} if ok + silent >= self.quorum else self.refused()


class LibraryLock:
    """redis-py's redis.lock.Lock, one Lock object per call: the workload
    extends and releases by token, which Lock keeps in lock.local.token."""

    def __init__(self, client):
        self.r = client

    def lock(self, key, ttl_ms, token=None):
        timeout = ttl_ms / 1000.0 if ttl_ms else None
        lock = redis.lock.Lock(self.r, key, timeout=timeout, blocking=False, thread_local=False)
        if token is not None:
            lock.local.token = token.encode()
        return lock

    def acquire(self, key, ttl_ms):
        token = new_token()
        if self.lock(key, ttl_ms).acquire(blocking=False, token=token):
            return {"status": "ok", "token": token}
        return {"status": "fail"}

    def extend(self, key, token, ttl_ms):
        try:
            self.lock(key, ttl_ms, token).extend(ttl_ms / 1000.0, replace_ttl=True)
        except redis.exceptions.LockError as e:
            return {"status": "fail", "error": f"{type(e).__name__}: {e}"}
        return {"status": "ok"}

    def release(self, key, token):
        try:
            self.lock(key, None, token).release()
        except redis.exceptions.LockError as e:
            return {"status": "fail", "error": f"{type(e).__name__}: {e}"}
        return {"status": "ok"}


class BrokenLock(Lock):
    """Lock with one deliberate bug (--bug)."""

    def __init__(self, client, mode, bug):
        super().__init__(client, mode)
        self.bug = bug

    def extend(self, key, token, ttl_ms):
        if self.bug == "extend-blind":
            done = self.r.pexpire(key, ttl_ms)
            return {"status": "ok"} if done else {"status": "fail"}
        return super().extend(key, token, ttl_ms)

    def release(self, key, token):
        reply = super().release(key, token)
        if self.bug == "release-ignores-reply":
            return {"status": "ok"}
        return reply


def handle(req, state, mode, bug=None):
    op = req.get("op")
    if op == "init":
        client = connect(req, mode)
        if req.get("topology") == "redlock":
            if bug or mode == "lock":
                raise ValueError("a redlock topology takes the native or lua mode, without --bug")
            state["lock"] = Redlock(client, mode)
            return {"status": "ok", "name": f"redis-py {redis.__version__} Redlock"}
        if bug:
            state["lock"] = BrokenLock(client, mode, bug)
        else:
            state["lock"] = LibraryLock(client) if mode == "lock" else Lock(client, mode)
        name = f"redis-py {redis.__version__}"
        return {"status": "ok", "name": name + " Lock" if mode == "lock" else name}
    if op == "close":
        return {"status": "ok"}
    lock = state.get("lock")
    if lock is None:
        return {"status": "fail", "error": "no init before " + str(op)}
    if op == "acquire":
        return lock.acquire(req["key"], int(req["ttl_ms"]))
    if op == "extend":
        return lock.extend(req["key"], req["token"], int(req["ttl_ms"]))
    if op == "release":
        return lock.release(req["key"], req["token"])
    return {"status": "fail", "error": f"unknown op {op!r}"}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mode", choices=("native", "fenced", "lua", "lock"), default="native")
    ap.add_argument("--bug", choices=("release-ignores-reply", "extend-blind"), default=None)
    args = ap.parse_args()
    if args.bug and args.mode == "lock":
        ap.error("--bug needs a mode of this adapter's own commands, not lock")
    state = {}
    for line in sys.stdin:
        if not line.strip():
            continue
        op = None
        pending["token"] = None
        try:
            req = json.loads(line)
            op = req.get("op")
            reply = handle(req, state, args.mode, args.bug)
        except (ConnectionError, TimeoutError, ReplyLost) as e:
            # Sent or not, the command may have run.
            reply = {"status": "unknown", "error": f"{type(e).__name__}: {e}"}
            if op == "acquire" and pending["token"]:
                reply["token"] = pending["token"]
        except ResponseError as e:
            reply = {"status": "fail", "error": str(e)}
        except (RedisError, Exception) as e:
            # Anything else (a cluster without a slot owner, a bug here):
            # say unknown, which never claims more than is known.
            log(traceback.format_exc())
            reply = {"status": "unknown", "error": f"{type(e).__name__}: {e}"}
            if op == "acquire" and pending["token"]:
                reply["token"] = pending["token"]
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()
        if op == "close":
            return


if __name__ == "__main__":
    main()
