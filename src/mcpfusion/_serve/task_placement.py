"""Where a served app's tasks run: this process, any worker sharing the store, or a queue."""

from __future__ import annotations

from mcpfusion._serve.options import HttpOptions
from mcpfusion._tasks.runner import TaskRunner
from mcpfusion._tasks.watched import WatchedTaskRunner


def task_runner(options: HttpOptions) -> TaskRunner | None:
    """The runner of a server with ``options``: ``None`` for the in-process default.

    With ``task_queue`` the calls go to ``mcpfusion worker`` processes; with a store
    that feeds cancels from other processes (``RedisTaskStore``) they run here and stop
    on a cancel made through any worker.
    """
    store = options.task_store
    if options.task_queue:
        # Imported here: SAQ and redis-py load only for a server that queues its tasks.
        from mcpfusion._serve.task_queue import QueueTaskRunner
        from mcpfusion._serve.task_redis import RedisTaskStore

        if not isinstance(store, RedisTaskStore):
            raise ValueError("task_queue needs a task_store in Redis (RedisTaskStore)")
        return QueueTaskRunner(store)
    watch = getattr(store, "watch_cancel", None)
    if store is not None and callable(watch):
        return WatchedTaskRunner(store)  # type: ignore[arg-type]  # checked just above
    return None
