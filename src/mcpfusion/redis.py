"""Shared state over Redis for servers of several workers or replicas (``mcpfusion[redis]``).

from mcpfusion.redis import RedisEventStore, RedisRateLimitStore, RedisSubscriptionBus

app.run(
    "http",
    workers=4,
    subscription_bus=RedisSubscriptionBus("redis://127.0.0.1:6379/0"),
    rate_limit_store=RedisRateLimitStore("redis://127.0.0.1:6379/0"),
)

``mcpfusion run APP --http --redis-url URL`` sets them all, with ``RedisCallerStore``
for ``ctx.caller_state`` and workflow states (the event store on stateful servers only).
``RedisTaskStore`` keeps MCP tasks, so any worker reads, answers or cancels any task (it
fails closed too); with ``--task-queue`` their calls run on ``mcpfusion worker`` processes
(docs/tasks.md, "Across workers").
Nothing waits on Redis: while it is unreachable, events are dropped, streams are not
stored and rate limits are not enforced (they fail open), while the caller store fails
closed (a call reading caller state fails rather than open a workflow gate); the
``mcpfusion`` logger warns once per outage and says when Redis is back, and each part
reconnects with a backoff from 0.1 s to 5 s. A Redis that accepts connections but does
not answer (paused, or overloaded) counts as unreachable once a call has waited
``CALL_WAIT`` (0.5 s) on it. Events are delivered at most once: ``subscriptions/listen``
has no replay, so a listener that missed one refetches when it listens again.

Each object pickles as its arguments, so options holding them reach every worker, where
each opens its own connections.
"""

from mcpfusion._serve.caller_redis import RedisCallerStore, shared_state
from mcpfusion._serve.redis import RedisEventStore, RedisRateLimitStore, RedisSubscriptionBus
from mcpfusion._serve.redis_signin import RedisSignInStore
from mcpfusion._serve.task_redis import RedisTaskStore

__all__ = [
    "RedisCallerStore",
    "RedisEventStore",
    "RedisRateLimitStore",
    "RedisSignInStore",
    "RedisSubscriptionBus",
    "RedisTaskStore",
    "shared_state",
]
