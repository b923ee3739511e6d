"""The plan path of a Presenter: one object rendered through its compiled ``Plan``."""

from __future__ import annotations

from collections.abc import Iterator, Sequence, ValuesView
from typing import Any

from pydantic import ValidationError

from mcpfusion._errors import PresenterError
from mcpfusion._present.builder import add_checked, add_ui
from mcpfusion._present.content import Attachment
from mcpfusion._present.plan import Plan
from mcpfusion._present.presenting import UI_VALUES, Presenting, collect
from mcpfusion._present.response import ToolResponse
from mcpfusion._present.style import Style
from mcpfusion._wire.datablock import select_fields
from mcpfusion._wire.parts import Suggestion, UIBlock


class Planning(Presenting):
    """The plan path of a ``Presenter``: ``compile`` and ``planned``.

    A base of ``Presenter``: a call returning one object takes this path.
    """

    def compile(self, style: Style) -> Plan:
        """The plan of this Presenter presenting one object for an app styled ``style``.

        An app makes one per action when its catalog freezes (``Action.freeze``).
        """
        return Plan.of(
            self.style,
            style,
            self._static_directives,
            self._static_rules,
            self._static_suggestions,
        )

    def planned(
        self, plan: Plan, data: Any, ctx: Any, select: Sequence[str] | None
    ) -> ToolResponse:
        """``present(data, ctx, select, style=plan.style)`` for one object, through ``plan``.

        Without an intermediate builder: the callbacks' values are checked as a builder
        checks them and rendered after the plan's fixed blocks. Children are presented as
        ``present`` presents them (``_embedded``) and their parts follow the Presenter's
        own. A list, or a Presenter that redacts or omits (itself or a child), takes
        ``present``.

        Raises:
            PresenterError: if the data does not fit the schema or a callback fails.
        """
        if self._redaction is not None or self._omit is not None:
            return self.present(data, ctx, select, style=plan.style)
        if data is None or isinstance(data, list | tuple):
            return self.present(data, ctx, select, style=plan.style)
        if type(data) is not dict and isinstance(data, Iterator | ValuesView):
            return self.present(data, ctx, select, style=plan.style)
        embeds = self._embeds
        if embeds and self._finishes():  # redaction searches every part: present's path
            return self.present(data, ctx, select, style=plan.style)
        try:  # ``_masked_one``, without its frame
            masked = self._mask.one(data)
        except ValidationError as exc:
            raise self._error(exc, collection=False) from exc
        # Before this Presenter's callbacks, which read the children's data (as ``_render``).
        children = self._embedded(data, masked, ctx, True) if embeds else ()
        ui_blocks: list[UIBlock] = []
        attachments: list[Attachment] = []
        directives: list[str] = []
        rules: list[str] = []
        suggestions: list[Suggestion] = []
        try:  # in _run_callbacks' order, each kind checked before the next one runs
            if hooks := self._ui.one:
                add_ui(ui_blocks, attachments, collect(hooks, masked, ctx, UI_VALUES))
            if hooks := self._directives:
                add_checked(directives, collect(hooks, masked, ctx, str), str, "directive")
            if hooks := self._rules.one:
                add_checked(rules, collect(hooks, masked, ctx, str), str, "rule")
            if hooks := self._suggest.one:
                found = collect(hooks, masked, ctx, Suggestion)
                add_checked(suggestions, found, Suggestion, "suggestion")
        except Exception as exc:
            raise PresenterError.callback_failed(self.name, exc) from exc
        shown: list[UIBlock] = []
        for view in children:  # as ``ResponseBuilder.merge`` adds them, after the own parts
            shown += view.ui_blocks
            shown += view.embeds
            directives += view.directives
            rules += view.system_rules
            suggestions += view.suggestions
        if select is not None:
            masked = select_fields(masked, self.select_keys, select)
        return plan.render(
            masked,
            tuple(ui_blocks),
            tuple(shown),
            directives,
            rules,
            suggestions,
            tuple(attachments),
        )
