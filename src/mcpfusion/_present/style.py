"""How responses are written where the framework chooses: data format, delimiter, UI audience."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal, get_args

from mcpfusion._errors import DefinitionError
from mcpfusion._wire.datablock import DATA_FORMATS, DELIMITERS, DataFormat, Delimiter

Audience = Literal["user", "all"]
"""Who UI blocks are for: ``"user"`` (MCP's ``audience: ["user"]``) or ``"all"`` (no annotation)."""

AUDIENCES: Final[tuple[Audience, ...]] = get_args(Audience)


@dataclass(frozen=True, slots=True)
class Style:
    """How a Presenter's responses are written; ``None`` leaves the choice to the app.

    The app's own style fills what a Presenter leaves open; an app that chooses nothing has
    ``MODEL_DEFAULT``. Outside an app (a Presenter presenting alone, the human views) the
    defaults are indented JSON, the ``|`` TOON delimiter and UI blocks for everyone.

    Attributes:
        data_format: ``"json"`` (indented), ``"compact"`` or ``"toon"`` (SPEC §3, §10).
        delimiter: the TOON delimiter: ``"|"``, ``","`` or ``"\\t"``.
        ui_audience: ``"user"`` annotates UI blocks and embeds ``audience: ["user"]``, for
            hosts that show them to the user without sending them to the model; ``"all"``
            leaves them unannotated, for the model too.

    Raises:
        DefinitionError: on a value outside the choices above.
    """

    data_format: DataFormat | None = None
    delimiter: Delimiter | None = None
    ui_audience: Audience | None = None

    def __post_init__(self) -> None:
        if self.data_format is not None and self.data_format not in DATA_FORMATS:
            raise DefinitionError(f"data_format must be one of {DATA_FORMATS}")
        if self.delimiter is not None and self.delimiter not in DELIMITERS:
            raise DefinitionError(f"delimiter must be one of {DELIMITERS}")
        if self.ui_audience is not None and self.ui_audience not in AUDIENCES:
            raise DefinitionError(f"ui_audience must be one of {AUDIENCES} or None")

    def over(self, defaults: Style) -> Style:
        """This style with what it leaves open taken from ``defaults``."""
        return Style(
            self.data_format or defaults.data_format,
            self.delimiter or defaults.delimiter,
            self.ui_audience or defaults.ui_audience,
        )

    @property
    def format(self) -> DataFormat:
        """The data format, indented JSON unless chosen."""
        return self.data_format or "json"

    @property
    def toon_delimiter(self) -> Delimiter:
        """The TOON delimiter, ``|`` unless chosen."""
        return self.delimiter or "|"


APP_DEFAULT: Final = Style()
"""The style of no app (a Presenter presenting alone): every choice left to the defaults."""

MODEL_DEFAULT: Final = Style("toon", "|", "user")
"""What an app chooses when it is told nothing, for the model that reads its answers.

TOON carries the data of compact JSON in fewer tokens (SPEC §10), and UI blocks go to the
user only: they restate the data block, which the model would otherwise read twice.
"""


def style_of(ctx: object) -> Style:
    """The style of the app whose call ``ctx`` is the context of; ``APP_DEFAULT`` without one.

    A handler's own ``view.present(data, ctx)`` honours the app this way: the call's
    ``Request`` carries the action's style. Read from the context rather than set around
    every call, it costs nothing to the calls whose handler presents nothing itself.
    """
    style = getattr(getattr(ctx, "request", None), "style", None)
    return style if isinstance(style, Style) else APP_DEFAULT
