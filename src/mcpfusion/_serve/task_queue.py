"""Tasks' calls run by queue workers through SAQ, off the web workers (``mcpfusion worker``)."""

from __future__ import annotations

import functools
import logging
from collections.abc import Mapping
from typing import Any, Final, Self

import anyio
from saq import Queue, Worker
from saq.job import Job, Status
from saq.types import PartialTimersDict

from mcpfusion._app.app import Fusion
from mcpfusion._identity import Identity
from mcpfusion._serve.results import respond
from mcpfusion._serve.rounds import missing_capability
from mcpfusion._serve.task_channels import TaskChannel
from mcpfusion._serve.task_claim import ClaimingQueue
from mcpfusion._serve.task_redis import ABANDONED, RedisTaskStore
from mcpfusion._serve.tasks import TaskService
from mcpfusion._tasks.runner import TaskCall
from mcpfusion._tasks.store import TaskRecord
from mcpfusion._tasks.watched import WatchedTaskRunner
from mcpfusion._tools.client import ClientLacks

logger = logging.getLogger("mcpfusion")

RUN_TASK: Final = "mcpfusion.run_task"
"""The name of the queue's one job: run the call of a task, by its id."""
DEFAULT_QUEUE: Final = "mcpfusion-tasks"
"""The SAQ queue of tasks (its Redis keys are ``saq:mcpfusion-tasks:*``)."""
_TRIES_BY_SAQ: Final = 100
"""SAQ's try limit, out of the way: a dead worker's tries are counted by ``TaskWorker``,
which fails the task in its record (SAQ would end the job with no word to the task); this
bounds only a job failing on Redis itself, retried with a backoff up to 30 s."""
DROPPED: Final = "the queue ended the task's job before the task ended"
"""The message of a task failed because SAQ ended its job ``aborted`` or ``failed`` (a sweep
that took a slow worker for dead, an abort from SAQ's tools): nothing would run it again."""


def identity_fields(identity: Identity | None) -> dict[str, Any] | None:
    """The caller's identity as JSON, for the job (``None`` for an anonymous caller)."""
    if identity is None:
        return None
    return {
        "subject": identity.subject,
        "client_id": identity.client_id,
        "scopes": sorted(identity.scopes),
        "expires_at": identity.expires_at,
        "claims": dict(identity.claims),
        "tenant": identity.tenant,
    }


class QueueTaskRunner(WatchedTaskRunner):
    """A ``TaskRunner`` handing tasks' calls to ``mcpfusion worker`` processes through a
    SAQ queue on Redis (``HttpOptions(task_queue=True)``).

    The web worker stores the task (``RedisTaskStore``) and starts it here; a queue worker
    takes it, runs the call through the app's pipeline as the caller, and stores the
    outcome, which any web worker then reads. The job is the task's id and the caller's
    identity, as JSON (SAQ's format: whoever writes to Redis runs no code on a worker); one
    job per task id, run by one worker at a time. Cancels and answers reach the worker
    through the store.

    A call that becomes a task from inside its handler (``task_begins="handler"``) is
    started before its task is stored, while its request waits on it: it runs here, as
    with ``WatchedTaskRunner``.

    Args:
        store: the task store, whose Redis carries the queue.
        queue: the SAQ queue the workers read.
    """

    def __init__(self, store: RedisTaskStore, *, queue: str = DEFAULT_QUEUE) -> None:
        super().__init__(store)
        self.store = store
        self.queue = queue
        self._queue: Queue | None = None

    def __reduce__(self) -> tuple[Any, ...]:
        return (functools.partial(type(self), self.store, queue=self.queue), ())

    async def start(
        self, record: TaskRecord, call: TaskCall, identity: Identity | None = None
    ) -> None:
        """Queues the task's call; runs it here if the task is not stored yet (see above)."""
        if await self.store.get(record.task_id) is None:
            await super().start(record, call, identity)
        else:
            await self.submit(record, identity)

    async def submit(self, record: TaskRecord, identity: Identity | None) -> None:
        """Queues the call of ``record`` to run as ``identity``; once per task id."""
        if self._queue is None:
            self._queue = Queue.from_url(self.store.url, name=self.queue)
            await self._queue.connect()
        await self._queue.enqueue(
            RUN_TASK,
            key=record.task_id,
            timeout=0,  # the worker's task_timeout ends a task, with a word in its record
            retries=_TRIES_BY_SAQ,
            retry_delay=1.0,
            retry_backoff=30.0,
            ttl=-1,  # the outcome is the task's record: SAQ keeps nothing once done
            task_id=record.task_id,
            identity=identity_fields(identity),
        )

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *_: object) -> None:
        queue, self._queue = self._queue, None
        if queue is not None:
            with anyio.CancelScope(shield=True):
                await queue.disconnect()


class TaskWorker:
    """Runs the tasks of a queue through ``app``: the body of ``mcpfusion worker``.

    A task is run as the identity that created it, through ``Fusion.call_tool`` (the
    pipeline every call takes: scopes, middleware, the workflow gate, timeouts); its
    progress and outcome go to the task store. A cancel published by any web worker stops
    the handler at once (``RedisTaskStore.watch_cancel``).

    While a task runs, its worker beats every third of ``heartbeat`` seconds. A worker
    killed mid-task (SIGKILL, a lost machine) stops beating: within two heartbeats and a
    few seconds a live worker's sweep takes the job back and runs it again while ``retries`` allows,
    else marks the task ``failed``. A worker stopped with SIGTERM or Ctrl-C hands its
    running jobs back at once, and that try is not counted. A job SAQ ends ``aborted`` or
    ``failed`` (a sweep took this worker for dead while it ran the task) fails its task
    (``DROPPED``): SAQ runs it no more.

    Args:
        app: the app whose tools the tasks call.
        url: the Redis URL, shared with the web workers.
        queue: the SAQ queue to read.
        concurrency: the tasks run at the same time on this worker.
        task_timeout: seconds a task may run before it is failed.
        retries: how many times a task whose worker died is run again (0: failed at
            once; more only for handlers that may safely run twice).
        heartbeat: seconds without a beat after which a task's worker counts as dead (a
            handler blocking the event loop that long is taken for dead too).
        store: the task store (a ``RedisTaskStore`` on ``url`` when not given).
    """

    def __init__(
        self,
        app: Fusion,
        url: str,
        *,
        queue: str = DEFAULT_QUEUE,
        concurrency: int = 10,
        task_timeout: float = 300.0,
        retries: int = 0,
        heartbeat: int = 10,
        store: RedisTaskStore | None = None,
    ) -> None:
        if concurrency < 1 or task_timeout <= 0 or retries < 0 or heartbeat < 1:
            raise ValueError("concurrency >= 1, task_timeout > 0, retries >= 0 and heartbeat >= 1")
        self.app = app
        self.url = url
        self.queue = queue
        self.concurrency = concurrency
        self.task_timeout = task_timeout
        self.retries = retries
        self.heartbeat = heartbeat
        self.store = store or RedisTaskStore(url)
        self._queue: Queue | None = None

    async def serve(self) -> None:
        """Runs tasks until SIGTERM or SIGINT, within the app's lifespan."""
        # The job is claimed with the heartbeat (ClaimingQueue), then beaten by run_task.
        queue = ClaimingQueue.from_url(self.url, name=self.queue, heartbeat=self.heartbeat)
        # Every worker sweeps the queue (one at a time, by a lock in Redis): a dead
        # worker's job is found within a heartbeat of its last beat.
        timers: PartialTimersDict = {
            "schedule": 1,
            "worker_info": 10,
            "sweep": self.heartbeat,
            "abort": 1,
        }
        worker = Worker(
            queue,
            [(RUN_TASK, self.run_task)],
            concurrency=self.concurrency,
            timers=timers,
            after_process=self._after_job,
        )
        self._queue = queue
        try:
            async with self.app.running(), self.store:
                await queue.connect()
                await worker.start()
        finally:
            with anyio.CancelScope(shield=True):
                await queue.disconnect()

    def _tries_key(self, task_id: str) -> str:
        return f"{self.store.prefix}:tries:{task_id}"

    async def run_task(
        self, ctx: Mapping[str, Any], *, task_id: str, identity: Mapping[str, Any] | None
    ) -> None:
        """Runs the call of task ``task_id`` as ``identity`` and stores its outcome."""
        record = await self.store.get(task_id)
        if record is None or record.terminal:
            return  # cancelled before it ran, or expired: nothing to do
        job: Job = ctx["job"]
        client = self._client()
        tries_key = self._tries_key(task_id)
        tries = int(await client.incr(tries_key))
        await client.expire(tries_key, 86_400)
        if tries > self.retries + 1:
            message = f"{ABANDONED} ({tries - 1} tries)"
            await self._fail(task_id, message, "INTERNAL_ERROR")
            return
        try:
            caller = None if identity is None else Identity(**identity)
        except TypeError as exc:  # a job not written by QueueExecutor.submit
            await self._fail(task_id, f"the task's caller cannot be read: {exc}", "INTERNAL_ERROR")
            return
        try:
            async with anyio.create_task_group() as beats:
                beats.start_soon(self._beat, job)
                await self._run(record, caller)
                beats.cancel_scope.cancel()
        except anyio.get_cancelled_exc_class():
            # SAQ is stopping this worker (SIGTERM): the job goes back to the queue, and
            # this try does not count against the task's retries. (An abort cancels too:
            # that job ends, and _after_job fails the task.)
            with anyio.CancelScope(shield=True):
                await client.decr(tries_key)
            raise

    def _client(self) -> Any:
        assert self._queue is not None, "run_task runs within serve()"
        return self._queue.redis  # type: ignore[attr-defined]  # a RedisQueue's client

    async def _beat(self, job: Job) -> None:
        # The claim stored the heartbeat and the first touch (ClaimingQueue).
        while True:
            await anyio.sleep(self.heartbeat / 3)
            await job.update()

    async def _after_job(self, ctx: Mapping[str, Any]) -> None:
        """Fails the task of a job SAQ ended ``aborted`` or ``failed``, if it is still live."""
        job: Job = ctx["job"]
        if job.function != RUN_TASK or job.status not in (Status.ABORTED, Status.FAILED):
            return
        task_id = (job.kwargs or {}).get("task_id")
        if not isinstance(task_id, str):
            return
        record = await self.store.get(task_id)
        if record is None or record.terminal:
            return
        ending = Status(job.status).value
        # SAQ's error (a traceback, a sweep's word) stays in this worker's log.
        logger.warning("the job of task %s ended %s in SAQ: %s", task_id, ending, job.error)
        await self._fail(task_id, f"{DROPPED} ({ending})", "INTERNAL_ERROR")

    async def _run(self, record: TaskRecord, identity: Identity | None) -> None:
        task_id = record.task_id
        name = str(record.params.get("name", ""))
        arguments = record.params.get("arguments")
        # The web workers' own parts (TaskService): progress and logs become the task's
        # status, questions wait in it for tasks/update, the outcome is recorded as in
        # process. The client's capabilities stay with the web worker: none are known here.
        service = TaskService(self.app, lambda ctx: None, store=self.store)
        channel = TaskChannel(
            self.store, service.runner, task_id, None, poll_seconds=service.poll_interval_ms / 1000
        )
        progress = service._progress(task_id)
        with anyio.CancelScope() as scope:
            unwatch = self.store.watch_cancel(task_id, scope.cancel)
            try:
                now = await self.store.get(task_id)
                if now is None or now.terminal:
                    return  # cancelled between the first read and the watch
                with anyio.fail_after(self.task_timeout):
                    response = await respond(
                        self.app,
                        name,
                        arguments if isinstance(arguments, Mapping) else None,
                        None,
                        progress,
                        identity,
                        channel,
                    )
            except TimeoutError:
                message = f"the task ran past the worker's {self.task_timeout:g} s limit"
                await self._fail(task_id, message, "TIMEOUT")
                return
            except ClientLacks as lack:
                await service._failed(task_id, missing_capability(lack))
                return
            except Exception:
                logger.exception("task %s failed outside the app", task_id)
                await service._failed(task_id, None)
                return
            finally:
                unwatch()
        if not scope.cancelled_caught:  # cancelled: the record says so already
            await service._completed(task_id, response)

    async def _fail(self, task_id: str, message: str, code: str) -> None:
        logger.warning("task %s failed: %s", task_id, message)
        error = {"code": -32603, "message": message, "data": {"code": code}}
        await self.store.update(task_id, status="failed", error=error)
