"""Prompts: typed arguments, messages, and messages built from a Presenter's view."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass
from typing import Any, Literal

from mcpfusion._errors import DefinitionError
from mcpfusion._present.builder import ResponseBuilder
from mcpfusion._present.content import (
    ATTACHMENTS,
    Attachment,
    Audio,
    EmbeddedResource,
    Image,
    ResourceLink,
)
from mcpfusion._present.presenter import Presenter
from mcpfusion._present.response import ToolResponse
from mcpfusion._present.style import APP_DEFAULT, Style
from mcpfusion._surface.completion import Completer, completer
from mcpfusion._tools.action import Action
from mcpfusion._tools.listing import Listing

Role = Literal["user", "assistant"]


@dataclass(frozen=True, slots=True)
class Message:
    """One prompt message: who says it and one piece of content (text, image, resource).

    Make them with ``user()`` and ``assistant()``.
    """

    role: Role
    content: str | Attachment

    def __post_init__(self) -> None:
        if self.role not in ("user", "assistant"):
            raise ValueError(f"a message's role is 'user' or 'assistant'; got {self.role!r}")
        if not isinstance(self.content, (str, *ATTACHMENTS)):
            raise TypeError(
                "a message holds a str, Image, Audio, EmbeddedResource or ResourceLink; "
                f"got {type(self.content).__name__}"
            )

    @property
    def text(self) -> str | None:
        """The text, for a text message."""
        return self.content if isinstance(self.content, str) else None

    def to_mcp(self) -> dict[str, Any]:
        """The MCP ``PromptMessage`` as a JSON-compatible dict."""
        if isinstance(self.content, str):
            return {"role": self.role, "content": {"type": "text", "text": self.content}}
        return {"role": self.role, "content": self.content.to_mcp()}


def user(content: str | Attachment) -> Message:
    """A message from the user: ``user("Summarize INV-1")`` or ``user(Image(png))``."""
    return Message("user", content)


def assistant(content: str | Attachment) -> Message:
    """A message from the assistant, e.g. the start of an answer for the model to go on."""
    return Message("assistant", content)


def messages_from_response(response: ToolResponse, role: Role = "user") -> list[Message]:
    """A response's blocks as messages, one per block, then its attachments."""
    found = [Message(role, block) for block in response.blocks]
    found += [Message(role, item) for item in response.attachments]
    return found


class ViewMessages(list[Message]):
    """A Presenter's view as messages (``messages_from_view``), with the response they
    were made of: the app checks its suggestion targets before the prompt is sent."""

    def __init__(self, response: ToolResponse, role: Role) -> None:
        super().__init__(messages_from_response(response, role))
        self.response = response
        self.role: Role = role


def messages_from_view(
    presenter: Presenter,
    data: Any,
    ctx: Any = None,
    *,
    with_ui: bool = False,
    role: Role = "user",
    style: Style = APP_DEFAULT,
) -> list[Message]:
    """A Presenter's view of ``data`` as messages: the masked data block, then its rules
    and suggestions (SPEC §2 order), one message per block.

    What a tool would not send, a prompt does not either: the same schema mask,
    redaction and neutralization. UI blocks and embeds are for people and are left out,
    except a truncation notice; ``with_ui=True`` keeps them.

    Raises:
        PresenterError: if the data does not fit the Presenter (a server defect).
    """
    built = presenter.builder(data, ctx, style=style)
    if not with_ui:
        built.without_ui()
    return ViewMessages(built.build(), role)


def as_messages(
    value: Any,
    role: Role = "user",
    *,
    checked: Callable[[ToolResponse], ToolResponse] | None = None,
) -> list[Message]:
    """What a prompt handler returned, as messages.

    A str is one user message, a ``Message`` itself, an image or resource a user message
    holding it, a response its blocks; a list or tuple is each of its items in turn.
    ``checked`` is applied to every response first (the app's suggestion targets).

    Raises:
        TypeError: on anything else.
    """
    match value:
        case Message():
            return [value]
        case str():
            return [Message(role, value)]
        case ViewMessages() if checked is not None:
            return messages_from_response(checked(value.response), value.role)
        case ToolResponse():
            return messages_from_response(checked(value) if checked else value, role)
        case ResponseBuilder():
            built = value.build()
            return messages_from_response(checked(built) if checked else built, role)
        case Image() | Audio() | EmbeddedResource() | ResourceLink():
            return [Message(role, value)]
        case list() | tuple():
            return [m for item in value for m in as_messages(item, role, checked=checked)]
    raise TypeError(
        "a prompt returns a str, a Message (user(), assistant()), a list of them, or "
        f"messages_from_view(...); got {type(value).__name__}"
    )


@dataclass(frozen=True, slots=True)
class PromptArgument:
    """One argument of a prompt as clients see it."""

    name: str
    description: str | None
    required: bool


class Prompt:
    """One prompt of an app. Made by ``@app.prompt()``.

    Its arguments are the handler's parameters, validated like an action's (MCP sends them
    as strings; ``"3"`` becomes ``3`` for an ``int``); the handler may also take the
    context and the app's state. It returns a str, messages (``user()``, ``assistant()``)
    or ``messages_from_view(...)``.

    Attributes:
        name: the prompt's name.
        description: what it is for (the handler's first docstring line unless given).
        requires: the scopes a caller needs to list and get it.
        arguments: its arguments, in signature order.
    """

    def __init__(
        self,
        name: str,
        handler: Callable[..., Any],
        *,
        title: str | None = None,
        description: str = "",
        requires: Collection[str] = (),
        timeout: float | None = None,
        context_type: type | None = None,
        state_type: type | None = None,
        style: Style = APP_DEFAULT,
        enabled: bool = True,
        on_change: Callable[[str | None], Awaitable[None]] | None = None,
    ) -> None:
        if not isinstance(description, str):
            raise DefinitionError(f"prompt '{name}': description must be a str")
        try:
            self.action = Action(
                name,
                "get",
                handler,
                context_type=context_type,
                state_type=state_type,
                requires=requires,
                timeout=timeout,
                style=style,
            )
        except DefinitionError as exc:
            message = str(exc).replace(f"{name}/get: ", "").replace(" of tool ", " of prompt ")
            raise DefinitionError(f"prompt '{name}': {message}") from None
        self.name = name
        self.title = title
        doc = (getattr(handler, "__doc__", None) or "").strip().split("\n", 1)[0].strip()
        self.description = description or doc
        self.requires = self.action.requires
        properties = self.action.params_schema.get("properties", {})
        self.arguments = tuple(
            PromptArgument(p.wire, properties.get(p.wire, {}).get("description"), p.required)
            for p in self.action.params
        )
        self.completers: dict[str, Completer] = {}
        self._types = (context_type, state_type)
        self._listing = Listing(enabled)
        self._on_change = on_change

    def __repr__(self) -> str:
        return f"Prompt({self.name!r})"

    # -- enabled at run time ---------------------------------------------------------------

    def enabled_for(self, tenant: str | None) -> bool:
        """Whether callers acting for ``tenant`` (``None``: for none) see and get it."""
        return self._listing.enabled_for(tenant)

    async def enable(self, *, tenant: str | None = None) -> None:
        """Lists the prompt again, for everyone or for one tenant's callers; connected
        clients are told their prompt list changed (``notifications/prompts/list_changed``)."""
        await self._switch(True, tenant)

    async def disable(self, *, tenant: str | None = None) -> None:
        """Stops listing the prompt, for everyone or for one tenant's callers; getting it is
        then an unknown prompt. Connected clients are told their prompt list changed."""
        await self._switch(False, tenant)

    async def _switch(self, enabled: bool, tenant: str | None) -> None:
        if self._listing.switch(enabled, tenant) and self._on_change is not None:
            await self._on_change(tenant)

    def complete(self, argument: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Registers the completion of an argument: ``@prompt.complete("customer_id")``.

        The function takes ``value`` (what the user typed so far), optionally
        ``arguments`` (the other arguments already chosen) and the context or the app's
        state, and returns the suggestions (at most 100 are sent).

        Raises:
            DefinitionError: if the prompt has no such argument.
        """
        names = [a.name for a in self.arguments]
        if argument not in names:
            raise DefinitionError(
                f"prompt '{self.name}' has no argument '{argument}'; "
                f"arguments: {', '.join(names) or 'none'}"
            )

        def register(fn: Callable[..., Any]) -> Callable[..., Any]:
            owner = f"completion of {argument!r} in prompt '{self.name}'"
            self.completers[argument] = completer(
                owner, fn, *self._types, timeout=self.action.timeout
            )
            return fn

        return register

    def listing(self) -> dict[str, Any]:
        """The MCP ``Prompt`` object, JSON-compatible."""
        found: dict[str, Any] = {"name": self.name}
        if self.title:
            found["title"] = self.title
        if self.description:
            found["description"] = self.description
        arguments = []
        for argument in self.arguments:
            item: dict[str, Any] = {"name": argument.name, "required": argument.required}
            if argument.description:
                item["description"] = argument.description
            arguments.append(item)
        found["arguments"] = arguments
        return found
