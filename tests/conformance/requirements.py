"""The requirements manifest: every normative clause of SPEC.md, with the tests that pin it.

Each ``Clause`` has a stable id ``S<section>.<n>`` (``S<section>.<sub>.<n>`` inside a numbered
subsection such as 4.1; ``<sub>`` is ``0`` for the text before a section's first subsection),
a one-line summary, and the pytest node ids (without parameters) of the tests that check it.

How to maintain it (``test_requirements.py`` enforces the mechanical part):

- A new SPEC clause gets the next free id of its section, in SPEC order, and at least one
  test; until it has one, it carries ``pending`` naming the issue that will implement it
  (or ``"untested"``) and no tests.
- Ids are never renumbered: a clause removed from SPEC.md leaves a gap, so an id quoted in
  an issue or a commit keeps meaning the same clause.
- A test that pins a clause names it here; renaming or deleting such a test means editing
  this file, which the existence check makes impossible to forget.
"""

# Node ids and summaries stay whole on one line, so they can be grepped and pasted into pytest.
# ruff: noqa: E501

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

PENDING_REASONS: Final = frozenset({"issue 10", "issue 14", "untested"})
"""Why a clause may have no test yet: the issue that implements it, or no test at all."""


@dataclass(frozen=True, slots=True)
class Clause:
    """One normative statement of SPEC.md and the tests that pin it.

    Attributes:
        id: ``S<section>.<n>`` or ``S<section>.<sub>.<n>``, e.g. ``S04.1.3``.
        summary: the statement, in one line.
        tests: pytest node ids, ``path::function`` without parametrization.
        pending: why there is no test yet (one of ``PENDING_REASONS``), else ``None``.
    """

    id: str
    summary: str
    tests: tuple[str, ...] = ()
    pending: str | None = None


CLAUSES: Final[tuple[Clause, ...]] = (
    # -- 1. Envelope -------------------------------------------------------------------
    Clause(
        "S01.1",
        'content is one {"type": "text", "text": …} item per block, in block order, and never empty.',
        tests=(
            "tests/conformance/test_s01_envelope.py::test_one_text_item_per_block_in_order",
            "tests/conformance/test_s01_envelope.py::test_content_is_never_empty",
            "tests/conformance/test_s01_envelope.py::test_a_response_without_blocks_is_refused",
        ),
    ),
    Clause(
        "S01.2",
        "isError is true on every error envelope except a warning, false otherwise.",
        tests=(
            "tests/conformance/test_s01_envelope.py::test_success_is_not_an_error_and_has_no_structured_content",
            "tests/conformance/test_s01_envelope.py::test_error_envelopes_set_is_error",
            "tests/conformance/test_s01_envelope.py::test_warning_is_not_an_error",
        ),
    ),
    Clause(
        "S01.3",
        "structuredContent is present only when the action returns structured output.",
        tests=(
            "tests/conformance/test_s01_envelope.py::test_success_is_not_an_error_and_has_no_structured_content",
            "tests/conformance/test_s01_envelope.py::test_structured_content_only_for_structured_success",
        ),
    ),
    Clause(
        "S01.4",
        "An item meant for the user's eyes only carries annotations {audience: [user]}; no other item carries annotations.",
        tests=(
            "tests/conformance/test_s04_audience.py::test_no_annotation_for_all",
            "tests/conformance/test_s04_audience.py::test_an_app_sends_ui_blocks_for_the_user_by_default",
            "tests/conformance/test_s04_audience.py::test_ui_and_embeds_for_the_user_but_not_the_notice",
            "tests/unit/_serve/test_sdk.py::test_ui_for_the_user_reaches_the_client_annotated",
        ),
    ),
    Clause(
        "S01.5",
        "Content that is not text follows the text items in the order added; a response of such content alone has no text item.",
        tests=(
            "tests/conformance/test_s13_content.py::test_other_content_follows_every_text_block_in_order_added",
            "tests/conformance/test_s13_content.py::test_a_handler_returning_content_sends_it_alone",
        ),
    ),
    # -- 2. Block order ----------------------------------------------------------------
    Clause(
        "S02.1",
        "build() emits data, UI, embeds, directives, rules, suggestions in that order, whatever order they were added in.",
        tests=(
            "tests/conformance/test_s02_block_order.py::test_full_response_golden",
            "tests/conformance/test_s02_block_order.py::test_order_is_independent_of_call_order",
            "tests/conformance/test_s02_block_order.py::test_kinds_appear_in_table_order",
            "tests/conformance/test_s02_block_order.py::test_embeds_follow_ui_even_when_added_first",
        ),
    ),
    Clause(
        "S02.2",
        "Exactly one data block; UI and embed blocks 0..n in insertion order; directives, rules and suggestions 0 or 1 block each.",
        tests=(
            "tests/conformance/test_s02_block_order.py::test_kinds_appear_in_table_order",
            "tests/conformance/test_s02_block_order.py::test_exactly_one_data_block_and_empty_kinds_omitted",
            "tests/conformance/test_s02_block_order.py::test_several_calls_of_one_kind_share_one_bullet_block",
            "tests/conformance/test_properties.py::test_parse_gives_back_what_went_in",
        ),
    ),
    Clause(
        "S02.3",
        "With state sync, the <cache_invalidation> block is the seventh and last kind, 0 or 1 of it.",
        tests=(
            "tests/conformance/test_s15_state_sync.py::test_success_ends_with_the_invalidation_block",
            "tests/conformance/test_s15_state_sync.py::test_builder_entries_come_first_and_the_block_is_last",
        ),
    ),
    Clause(
        "S02.4",
        "A Presenter's truncation notice is the first UI block.",
        tests=(
            "tests/conformance/test_s05_presenters.py::test_collection_golden_with_default_truncation_notice",
            "tests/conformance/test_s05_presenters.py::test_custom_notice_decorator_comes_first",
        ),
    ),
    Clause(
        "S02.5",
        "Content that is not text is not a block: it follows every block.",
        tests=(
            "tests/conformance/test_s13_content.py::test_other_content_follows_every_text_block_in_order_added",
            "tests/conformance/test_s13_content.py::test_a_presenter_ui_callback_attaches_an_image_after_the_text",
        ),
    ),
    # -- 3. The data block -------------------------------------------------------------
    Clause(
        "S03.1",
        "A str payload is sent verbatim (after neutralization); the empty string becomes OK.",
        tests=(
            "tests/conformance/test_s03_data_block.py::test_str_is_sent_verbatim",
            "tests/conformance/test_s03_data_block.py::test_empty_string_is_ok",
            "tests/conformance/test_s07_neutralization.py::test_str_data_block_is_neutralized",
        ),
    ),
    Clause(
        "S03.2",
        "Other values are JSON.stringify(v, null, 2): 2-space indent, ': ', []/{} when empty, non-ASCII raw, NaN/±Infinity as null.",
        tests=(
            "tests/conformance/test_s03_data_block.py::test_json_layout_golden",
            "tests/conformance/test_s03_data_block.py::test_json_layout_parses_back",
            "tests/conformance/test_s03_data_block.py::test_scalars_and_top_level_containers",
        ),
    ),
    Clause(
        "S03.3",
        "Keys follow the Presenter schema's declaration order, insertion order for unpresented dicts.",
        tests=(
            "tests/conformance/test_s03_data_block.py::test_key_order_is_insertion_order",
            "tests/conformance/test_s05_presenters.py::test_keys_follow_schema_declaration_order",
        ),
    ),
    Clause(
        "S03.4",
        "Models, dataclasses, datetime, Decimal, UUID, enums and sets serialize as pydantic's JSON mode does.",
        tests=(
            "tests/conformance/test_s03_data_block.py::test_python_types_golden",
            "tests/conformance/test_s05_presenters.py::test_rich_types_serialize_like_pydantic_json_mode",
        ),
    ),
    Clause(
        "S03.5",
        "A value that cannot be serialized is INTERNAL_ERROR, never a repr() on the wire.",
        tests=(
            "tests/conformance/test_s03_data_block.py::test_unserializable_value_is_an_internal_error",
            "tests/conformance/test_s09_call_errors.py::test_non_serializable_return",
            "tests/conformance/test_s09_call_errors.py::test_too_deep_to_serialize_is_internal_error",
        ),
    ),
    Clause(
        "S03.6",
        "Inside JSON strings a '<' that starts a reserved tag is written \\u003c, so the parsed value is unchanged.",
        tests=(
            "tests/conformance/test_s03_data_block.py::test_reserved_tag_in_json_string_is_unicode_escaped",
            "tests/conformance/test_s07_neutralization.py::test_json_form_writes_unicode_escape",
        ),
    ),
    Clause(
        "S03.7",
        "A Presenter may use compact JSON (no indentation) or TOON; the default is the indented form.",
        tests=(
            "tests/conformance/test_s03_data_block.py::test_compact_option_has_no_indentation",
            "tests/conformance/test_s03_data_block.py::test_default_format_is_indented_json",
            "tests/conformance/test_s05_presenters.py::test_compact_data_format",
            "tests/conformance/test_s05_presenters.py::test_toon_data_format",
        ),
    ),
    Clause(
        "S03.8",
        "An app may choose the format and TOON delimiter for Presenters that choose none and for plain values.",
        tests=(
            "tests/conformance/test_s10_toon_options.py::test_the_app_chooses_for_presenters_and_plain_values",
            "tests/unit/_present/test_style.py::test_app_data_format_applies_where_a_presenter_chooses_none",
        ),
    ),
    Clause(
        "S03.9",
        "A lone surrogate is written U+FFFD in every format; an entry holding pydantic's MISSING is left out.",
        tests=(
            "tests/conformance/test_s03_repair.py::test_lone_surrogates_and_missing",
            "tests/unit/_wire/test_repair.py::test_lone_surrogate_in_presented_data_becomes_replacement_character",
            "tests/unit/test_absent_fields.py::test_plain_data_and_structured_content_leave_missing_out",
        ),
    ),
    # -- 4.1 UI block template ---------------------------------------------------------
    Clause(
        "S04.1.1",
        "<ui_passthrough …> has one newline after the opening tag, one before the closing tag, none after.",
        tests=(
            "tests/conformance/test_s04_ui_blocks.py::test_seed_echarts_example",
            "tests/conformance/test_s04_ui_blocks.py::test_template_newlines_and_no_trailing_newline",
        ),
    ),
    Clause(
        "S04.1.2",
        "Attributes are type, then title (if non-empty), width (if set), priority (if set; 0 kept), in that order.",
        tests=(
            "tests/conformance/test_s04_ui_blocks.py::test_attribute_order_is_fixed",
            "tests/conformance/test_s04_ui_blocks.py::test_priority_zero_kept_and_empty_title_omitted",
        ),
    ),
    Clause(
        "S04.1.3",
        "Every attribute value escapes & < > \" ' as XML entities.",
        tests=(
            "tests/conformance/test_s04_ui_blocks.py::test_attribute_escaping",
            "tests/conformance/test_s07_neutralization.py::test_ui_content_title_and_type_cannot_forge",
        ),
    ),
    Clause(
        "S04.1.4",
        "width is full, half or third and priority an int; anything else raises when the block is defined.",
        tests=(
            "tests/conformance/test_s04_ui_blocks.py::test_valid_widths",
            "tests/conformance/test_s04_ui_blocks.py::test_invalid_width_raises_at_definition",
            "tests/conformance/test_s04_ui_blocks.py::test_non_int_priority_raises",
            "tests/conformance/test_s04_ui_blocks.py::test_negative_priority_is_an_int",
        ),
    ),
    Clause(
        "S04.1.5",
        "The block content is tag-neutralized.",
        tests=(
            "tests/conformance/test_s04_ui_blocks.py::test_content_is_neutralized",
            "tests/conformance/test_s07_neutralization.py::test_ui_content_title_and_type_cannot_forge",
        ),
    ),
    # -- 4.2 UI helpers ----------------------------------------------------------------
    Clause(
        "S04.2.1",
        "Each helper (echarts, mermaid, markdown, code_block, table, list, json, summary) sets the type and content of the helper table.",
        tests=(
            "tests/conformance/test_s04_ui_blocks.py::test_helpers_golden",
            "tests/conformance/test_s04_ui_blocks.py::test_helper_types",
            "tests/conformance/test_s04_ui_blocks.py::test_markdown_is_not_fenced",
        ),
    ),
    Clause(
        "S04.2.2",
        "json(x) inside the echarts and json helpers is the data-block JSON of section 3.",
        tests=(
            "tests/conformance/test_s04_ui_blocks.py::test_helpers_golden",
            "tests/conformance/test_s07_neutralization.py::test_fenced_json_in_ui_is_neutralized",
            "tests/unit/_present/test_ui.py::test_echarts_and_json_accept_models",
            "tests/unit/_present/test_ui.py::test_json_of_unserializable_value_raises",
        ),
    ),
    Clause(
        "S04.2.3",
        "Every helper takes optional keyword metadata title, width and priority.",
        tests=("tests/conformance/test_s04_ui_blocks.py::test_every_helper_takes_metadata",),
    ),
    Clause(
        "S04.2.4",
        "fence(lang, body) is run, lang, newline, body, newline, run: three backticks, or one more than the body's longest run of 3+.",
        tests=(
            "tests/conformance/test_s04_ui_blocks.py::test_fence_three_backticks_by_default",
            "tests/conformance/test_s04_ui_blocks.py::test_fence_grows_past_the_longest_run",
            "tests/conformance/test_s04_ui_blocks.py::test_fence_growth_inside_a_helper",
            "tests/unit/_wire/test_format.py::test_fence_run_outgrows_the_body",
        ),
    ),
    Clause(
        "S04.2.5",
        "Table: header line, one --- per header, one line per row; cells str()-ed, None empty, | as \\|, newlines as a space.",
        tests=(
            "tests/conformance/test_s04_ui_blocks.py::test_helpers_golden",
            "tests/conformance/test_s04_ui_blocks.py::test_table_escapes_pipes_and_folds_newlines",
            "tests/unit/_present/test_ui.py::test_table_without_rows_is_a_header",
        ),
    ),
    Clause(
        "S04.2.6",
        "A table row with the wrong number of cells raises ValueError.",
        tests=("tests/conformance/test_s04_ui_blocks.py::test_table_row_of_wrong_length_raises",),
    ),
    Clause(
        "S04.2.7",
        "List: one '- item' line per item, newline-joined; newlines inside an item become a space.",
        tests=(
            "tests/conformance/test_s04_ui_blocks.py::test_list_folds_newlines_in_items",
            "tests/unit/_present/test_ui.py::test_list_stringifies_items",
        ),
    ),
    # -- 4.3 Audience ------------------------------------------------------------------
    Clause(
        "S04.3.1",
        "With UI for the user, every UI block and embed is annotated audience [user], except the truncation notice; none by default.",
        tests=(
            "tests/conformance/test_s04_audience.py::test_ui_and_embeds_for_the_user_but_not_the_notice",
            "tests/conformance/test_s04_audience.py::test_a_presenter_choice_wins_over_the_app",
            "tests/unit/_present/test_style.py::test_ui_for_the_user_is_annotated_and_the_notice_is_not",
            "tests/unit/_present/test_style.py::test_app_ui_audience_and_embeds",
        ),
    ),
    # -- 5. Presenters -----------------------------------------------------------------
    Clause(
        "S05.0.1",
        "A Presenter's schema is a pydantic model (the egress whitelist) and its limit optional; a bad one fails at definition.",
        tests=(
            "tests/conformance/test_s05_presenters.py::test_bad_schema_is_a_definition_error",
            "tests/conformance/test_s05_presenters.py::test_negative_limit_is_a_definition_error",
            "tests/conformance/test_s05_presenters.py::test_non_int_limit_is_a_definition_error",
        ),
    ),
    Clause(
        "S05.0.2",
        "Callbacks receive (data, ctx): the masked data and the request context.",
        tests=(
            "tests/conformance/test_s05_presenters.py::test_callbacks_take_data_or_data_and_ctx",
            "tests/conformance/test_s05_presenters.py::test_nested_masking_never_leaks_anywhere",
            "tests/unit/_app/test_app.py::test_presenter_callbacks_receive_the_context",
        ),
    ),
    Clause(
        "S05.1.1",
        "A list is cut to the limit before anything else; rows past it are never validated.",
        tests=(
            "tests/conformance/test_s05_presenters.py::test_rows_past_the_limit_are_never_validated",
            "tests/conformance/test_s05_presenters.py::test_collection_golden_with_default_truncation_notice",
            "tests/conformance/test_s06_embeds.py::test_child_limit_skips_validation_of_dropped_lines",
        ),
    ),
    Clause(
        "S05.1.2",
        "Masking validates each item, drops undeclared fields at every nesting level and follows schema declaration order.",
        tests=(
            "tests/conformance/test_s05_presenters.py::test_nested_masking_never_leaks_anywhere",
            "tests/conformance/test_s05_presenters.py::test_keys_follow_schema_declaration_order",
            "tests/conformance/test_s05_presenters.py::test_every_input_kind_gives_the_same_block",
            "tests/conformance/test_s05_presenters.py::test_fast_and_model_paths_give_the_same_block",
        ),
    ),
    Clause(
        "S05.1.3",
        "A validation failure is PRESENTER_ERROR naming the Presenter, the item index and the field path.",
        tests=(
            "tests/conformance/test_s05_presenters.py::test_presenter_error_names_presenter_row_and_field",
            "tests/conformance/test_s05_presenters.py::test_presenter_error_for_object_rows_names_the_real_row",
            "tests/conformance/test_s05_presenters.py::test_presenter_error_for_a_single_object",
        ),
    ),
    Clause(
        "S05.1.4",
        "Rules, UI, suggestions and directives are computed on the full masked data, after the limit and before _select.",
        tests=(
            "tests/conformance/test_s05_presenters.py::test_collection_golden_with_default_truncation_notice",
            "tests/conformance/test_s11_select_data.py::test_select_on_an_object_golden",
            "tests/conformance/test_s11_select_data.py::test_select_on_a_list_golden",
            "tests/unit/_present/test_presenter.py::test_callbacks_see_the_data_of_the_data_block",
        ),
    ),
    Clause(
        "S05.1.5",
        "Items may be mappings, rows read by key (keys() and [key], e.g. sqlite3.Row), models, dataclasses or objects.",
        tests=(
            "tests/conformance/test_s05_rows.py::test_rows_read_by_key_are_masked",
            "tests/unit/_present/test_masking.py::test_sqlite_rows_take_the_fast_path",
            "tests/unit/_present/test_masking.py::test_mapping_like_rows_are_read_by_key_and_errors_name_the_row",
        ),
    ),
    Clause(
        "S05.1.6",
        "A MISSING field is absent for callbacks, embeds, _select and the data block; a RootModel over a model masks as that model.",
        tests=(
            "tests/conformance/test_s05_rows.py::test_missing_is_absent_everywhere",
            "tests/conformance/test_s05_rows.py::test_a_root_model_masks_and_selects_as_its_model",
            "tests/unit/test_absent_fields.py::test_missing_embed_key_renders_nothing",
            "tests/unit/test_absent_fields.py::test_callbacks_never_see_missing",
        ),
    ),
    Clause(
        "S05.1.7",
        "A Presenter may leave out None values of fields declared optional with a None default; callbacks still see them.",
        tests=(
            "tests/conformance/test_s05_rows.py::test_omit_none_is_opt_in_and_keeps_none_values",
            "tests/unit/_present/test_style.py::test_omit_none_drops_only_none_defaults_at_every_level",
        ),
    ),
    Clause(
        "S05.2.1",
        "A single object runs the item callbacks once; a list runs only the collection callbacks, once, with the whole list.",
        tests=(
            "tests/conformance/test_s05_presenters.py::test_single_object_golden",
            "tests/conformance/test_s05_presenters.py::test_item_callbacks_run_only_for_a_single_object",
            "tests/conformance/test_s05_presenters.py::test_collection_callbacks_run_once_for_a_list",
            "tests/conformance/test_s05_presenters.py::test_empty_list",
        ),
    ),
    Clause(
        "S05.2.2",
        "Static rules are emitted for a single object and for a list alike.",
        tests=(
            "tests/conformance/test_s05_presenters.py::test_item_callbacks_run_only_for_a_single_object",
            "tests/conformance/test_s05_presenters.py::test_collection_callbacks_run_once_for_a_list",
        ),
    ),
    Clause(
        "S05.2.3",
        "None and falsy entries returned by a callback are dropped.",
        tests=(
            "tests/conformance/test_s05_presenters.py::test_falsy_and_none_entries_are_dropped",
        ),
    ),
    Clause(
        "S05.2.4",
        "Static suggestions are emitted for a single object and for a list.",
        tests=("tests/conformance/test_s05_rows.py::test_static_suggestions_for_items_and_lists",),
    ),
    Clause(
        "S05.3.1",
        "When items were cut, the first UI block is the 'Dataset truncated. {shown} shown, {hidden} hidden.' summary; none otherwise.",
        tests=(
            "tests/conformance/test_s05_presenters.py::test_collection_golden_with_default_truncation_notice",
            "tests/conformance/test_s05_presenters.py::test_no_notice_when_nothing_was_cut",
            "tests/unit/_present/test_presenter.py::test_limit_zero_hides_everything",
        ),
    ),
    Clause(
        "S05.3.2",
        "A notice callback (hidden) -> UIBlock supplied by the Presenter replaces the default notice.",
        tests=(
            "tests/conformance/test_s05_presenters.py::test_custom_notice_constructor_argument",
            "tests/conformance/test_s05_presenters.py::test_custom_notice_decorator_comes_first",
        ),
    ),
    Clause(
        "S05.4.1",
        "An action declared with paging=True needs a Presenter with a limit and accepts a string _cursor, listed before _select; other actions, even with the same Presenter, do not.",
        tests=(
            "tests/conformance/test_s05_paging.py::test_cursor_is_listed_before_select",
            "tests/conformance/test_s05_paging.py::test_a_flat_paging_action_lists_cursor_without_usage",
            "tests/conformance/test_s05_paging.py::test_paging_needs_a_presenter_with_a_limit",
            "tests/conformance/test_s05_paging.py::test_a_single_object_through_the_same_presenter_is_not_paged",
            "tests/conformance/test_s05_paging.py::test_an_action_that_does_not_page_refuses_a_cursor",
        ),
    ),
    Clause(
        "S05.4.2",
        "A page keeps the limit rows from its offset (every row returned, or a handler's Page of ctx.page); masking, callbacks and _select are the same on every page.",
        tests=(
            "tests/conformance/test_s05_paging.py::test_pages_follow_to_the_end_with_the_same_rules_and_suggestions",
            "tests/conformance/test_s05_paging.py::test_a_handler_fetches_only_its_page",
            "tests/conformance/test_s05_paging.py::test_select_trims_every_page_and_may_change_between_pages",
            "tests/conformance/test_s05_paging.py::test_a_page_returned_by_an_action_that_does_not_page_is_cut_by_the_limit",
            "tests/conformance/test_s05_paging.py::test_a_page_checks_its_fields",
            "tests/conformance/test_s05_paging.py::test_presented_outside_a_paging_call_the_plain_limit_applies",
        ),
    ),
    Clause(
        "S05.4.3",
        "A page with a next one starts with the paging notice and ends its suggestions with the next-page call, both carrying the cursor; the last page has neither.",
        tests=(
            "tests/conformance/test_s05_paging.py::test_first_page_golden",
            "tests/conformance/test_s05_paging.py::test_pages_follow_to_the_end_with_the_same_rules_and_suggestions",
            "tests/conformance/test_s05_paging.py::test_a_page_of_unknown_total_says_more_follow",
            "tests/conformance/test_s05_paging.py::test_flat_exposition_spells_the_next_page_target_as_listed",
            "tests/conformance/test_s05_paging.py::test_a_custom_notice_gives_way_to_the_paging_notice",
        ),
    ),
    Clause(
        "S05.4.4",
        "Every page carries structuredContent {items, page: {offset, returned, total, nextCursor}}.",
        tests=(
            "tests/conformance/test_s05_paging.py::test_structured_items_are_neutralized",
            "tests/conformance/test_s05_paging.py::test_first_page_golden",
            "tests/conformance/test_s05_paging.py::test_pages_follow_to_the_end_with_the_same_rules_and_suggestions",
            "tests/conformance/test_s05_paging.py::test_a_page_of_unknown_total_says_more_follow",
        ),
    ),
    Clause(
        "S05.4.5",
        "A cursor is sealed and bound to the caller and the query; a changed, foreign, expired or other-query cursor is INVALID_CURSOR before the handler runs; a non-string one is a validation error.",
        tests=(
            "tests/conformance/test_s05_paging.py::test_a_changed_cursor_envelope",
            "tests/conformance/test_s05_paging.py::test_a_foreign_cursor_envelope",
            "tests/conformance/test_s05_paging.py::test_another_query_envelope",
            "tests/conformance/test_s05_paging.py::test_another_secret_refuses_the_cursor",
            "tests/conformance/test_s05_paging.py::test_a_cursor_that_is_not_a_string_is_a_validation_error",
            "tests/unit/_tools/test_cursors.py::test_an_expired_cursor_is_refused",
            "tests/unit/_tools/test_cursors.py::test_another_caller_is_refused",
            "tests/unit/_tools/test_cursors.py::test_another_query_is_refused",
        ),
    ),
    # -- 6. Embeds ---------------------------------------------------------------------
    Clause(
        "S06.1",
        "The child reads its key from the raw data, masks and limits it with its own schema and limit; its result is under that key.",
        tests=(
            "tests/conformance/test_s06_embeds.py::test_embed_in_a_single_parent_golden",
            "tests/conformance/test_s06_embeds.py::test_child_masking_never_leaks_to_blocks_or_callbacks",
            "tests/conformance/test_s06_embeds.py::test_child_error_names_the_child_presenter",
            "tests/conformance/test_s06_embeds.py::test_child_limit_skips_validation_of_dropped_lines",
        ),
    ),
    Clause(
        "S06.2",
        "If the parent schema declares the key too, the child's result replaces it.",
        tests=(
            "tests/conformance/test_s06_embeds.py::test_child_replaces_a_key_the_parent_declares",
        ),
    ),
    Clause(
        "S06.3",
        "The child's UI blocks become embed blocks (kind 3), each a complete <ui_passthrough>.",
        tests=(
            "tests/conformance/test_s06_embeds.py::test_embed_in_a_single_parent_golden",
            "tests/conformance/test_s06_embeds.py::test_grandchild_of_a_single_child_keeps_its_ui",
        ),
    ),
    Clause(
        "S06.4",
        "Child rules, directives and suggestions merge into the parent's single blocks, parent entries first, duplicates dropped.",
        tests=(
            "tests/conformance/test_s06_embeds.py::test_child_rules_are_merged_parent_first_without_duplicates",
        ),
    ),
    Clause(
        "S06.5",
        "Under a list of parents every child renders its data but no UI block; child rules and suggestions merge, de-duplicated.",
        tests=("tests/conformance/test_s06_embeds.py::test_embed_in_a_collection_parent_golden",),
    ),
    Clause(
        "S06.6",
        "A missing or None key renders nothing.",
        tests=("tests/conformance/test_s06_embeds.py::test_missing_or_none_key_renders_nothing",),
    ),
    Clause(
        "S06.7",
        "Embeds nest to any depth; a cycle is rejected at definition time.",
        tests=(
            "tests/conformance/test_s06_embeds.py::test_embeds_nest_two_levels_golden",
            "tests/conformance/test_s06_embeds.py::test_direct_cycle_is_rejected",
            "tests/conformance/test_s06_embeds.py::test_indirect_cycles_are_rejected",
            "tests/conformance/test_s06_embeds.py::test_shared_child_is_not_a_cycle",
        ),
    ),
    # -- 7. Reserved tags and neutralization -------------------------------------------
    Clause(
        "S07.1",
        "ui_passthrough, llm_directives, domain_rules, action_suggestions, tool_error and validation_error are reserved names.",
        tests=("tests/conformance/test_s07_neutralization.py::test_reserved_names",),
    ),
    Clause(
        "S07.2",
        "cache_invalidation is a reserved name too.",
        pending="issue 14",
    ),
    Clause(
        "S07.3",
        "Framework text inside a block (UI content, bullet text, error messages) cannot open or close a reserved tag.",
        tests=(
            "tests/conformance/test_s07_neutralization.py::test_ui_content_title_and_type_cannot_forge",
            "tests/conformance/test_s07_neutralization.py::test_bullets_are_neutralized",
            "tests/conformance/test_s07_neutralization.py::test_error_text_is_escaped",
            "tests/conformance/test_s05_presenters.py::test_hostile_strings_are_neutralized_golden",
            "tests/conformance/test_properties.py::test_error_envelope_cannot_be_forged",
        ),
    ),
    Clause(
        "S07.4",
        "Progress messages cannot open or close a reserved tag.",
        tests=("tests/unit/_tools/test_context.py::test_progress_messages_follow_the_text_rules",),
    ),
    Clause(
        "S07.5",
        "No string in the data block (any format) can open or close a reserved tag.",
        tests=(
            "tests/conformance/test_s07_neutralization.py::test_str_data_block_is_neutralized",
            "tests/conformance/test_s07_neutralization.py::test_json_form_writes_unicode_escape",
            "tests/conformance/test_s05_presenters.py::test_hostile_strings_are_neutralized_in_other_formats",
            "tests/conformance/test_properties.py::test_no_reserved_tag_is_forged",
        ),
    ),
    Clause(
        "S07.6",
        "No string in structured content can open or close a reserved tag.",
        tests=(
            "tests/attack/test_issue10.py::test_structured_content_carried_tags_raw",
            "tests/attack/test_issue10.py::test_structured_content_from_an_output_schema",
            "tests/attack/test_properties.py::test_structured_content_fools_no_reader",
        ),
    ),
    Clause(
        "S07.7",
        "A '<' followed by an optional '/' and a name starting with a reserved name, in any ASCII case, is neutralized.",
        tests=(
            "tests/conformance/test_s07_neutralization.py::test_text_form_writes_lt_entity",
            "tests/unit/_wire/test_format.py::test_neutralize_leaves_no_reserved_tag",
        ),
    ),
    Clause(
        "S07.8",
        "Optional whitespace after '<' and around the '/' does not escape neutralization.",
        tests=(
            "tests/attack/test_issue10.py::test_space_after_the_slash_closes_the_tag",
            "tests/conformance/test_s07_neutralization.py::test_widened_rule_writes_lt_entity",
        ),
    ),
    Clause(
        "S07.9",
        "Names are compared after Unicode NFKC normalization and case folding (ſ, ı, İ, full-width letters).",
        tests=(
            "tests/attack/test_issue10.py::test_long_s_spells_the_rules_tag",
            "tests/attack/test_issue10.py::test_dotless_i_spells_the_directives_tag",
            "tests/attack/test_issue10.py::test_dotted_capital_i_spells_the_validation_tag",
            "tests/attack/test_issue10.py::test_full_width_letters_spell_the_tag",
            "tests/unit/_wire/test_format.py::test_regex_shortcuts_agree_with_the_rule",
        ),
    ),
    Clause(
        "S07.10",
        "A '<' followed by '!' or '?' (comments, CDATA, declarations, processing instructions) is neutralized.",
        tests=(
            "tests/attack/test_issue10.py::test_comment_in_the_json_data_block_hides_every_later_block",
            "tests/attack/test_issue10.py::test_cdata_section_in_ui_content_hides_the_rest",
            "tests/attack/test_issue10.py::test_processing_instruction_in_a_reason_swallows_the_closing_tag",
        ),
    ),
    Clause(
        "S07.11",
        "Any other '<' (other markup, a lone '<') is written as it is.",
        tests=(
            "tests/conformance/test_s07_neutralization.py::test_other_text_is_untouched",
            "tests/unit/_wire/test_datablock.py::test_to_json_neutralizes_only_reserved_tags",
        ),
    ),
    Clause(
        "S07.12",
        "A neutralized '<' is &lt; in text and \\u003c in the data block's JSON strings, so decoded data is unchanged.",
        tests=(
            "tests/conformance/test_s07_neutralization.py::test_text_form_writes_lt_entity",
            "tests/conformance/test_s07_neutralization.py::test_json_form_writes_unicode_escape",
            "tests/conformance/test_s05_presenters.py::test_hostile_strings_are_neutralized_golden",
        ),
    ),
    Clause(
        "S07.13",
        "In structured content the string itself carries &lt;, and the text block mirroring it shows the same.",
        tests=("tests/attack/test_issue10.py::test_structured_content_carried_tags_raw",),
    ),
    Clause(
        "S07.14",
        "Data cannot forge or hide a block, blocks read separately or concatenated, by the project's parser.",
        tests=(
            "tests/conformance/test_properties.py::test_no_reserved_tag_is_forged",
            "tests/conformance/test_properties.py::test_parse_gives_back_what_went_in",
            "tests/conformance/test_s05_presenters.py::test_hostile_strings_are_neutralized_golden",
        ),
    ),
    Clause(
        "S07.15",
        "Nor by a Unicode case-insensitive regular expression or an HTML-style tokenizer.",
        tests=(
            "tests/attack/test_corpus.py::test_no_reader_is_fooled_at",
            "tests/attack/test_properties.py::test_a_built_response_fools_no_reader",
            "tests/attack/test_properties.py::test_neutralized_text_fools_no_reader",
        ),
    ),
    Clause(
        "S07.16",
        "A '<' before '/' or an ASCII letter is neutralized when its tag is left open in its string (an unclosed quote after '=' included) or it opens a raw-text element whose end tag does not follow.",
        tests=(
            "tests/attack/test_unclosed_markup.py::test_markup_left_open_hides_a_framework_tag",
            "tests/attack/test_unclosed_markup.py::test_structured_content_left_open_hides_the_next_block",
            "tests/attack/test_unclosed_markup.py::test_complete_markup_is_kept",
            "tests/attack/test_unclosed_markup.py::test_a_string_packed_with_open_tags_is_neutralized_in_linear_time",
        ),
    ),
    # -- 8. Bullet blocks --------------------------------------------------------------
    Clause(
        "S08.1",
        "<llm_directives>, <domain_rules> and <action_suggestions> hold one '- entry' line each ('- tool: reason'), no trailing newline.",
        tests=(
            "tests/conformance/test_s08_bullets.py::test_seed_rules_and_suggestions",
            "tests/conformance/test_s08_bullets.py::test_directives_template",
            "tests/unit/_wire/test_format.py::test_bullet_block_template",
            "tests/unit/_wire/test_format.py::test_suggestion_entry",
        ),
    ),
    Clause(
        "S08.2",
        "Inside an entry every run of line breaks becomes one space.",
        tests=(
            "tests/conformance/test_s08_bullets.py::test_line_breaks_fold_to_one_space",
            "tests/conformance/test_s08_bullets.py::test_line_breaks_fold_in_suggestion_reasons",
            "tests/conformance/test_s08_bullets.py::test_bullets_with_breaks_duplicates_empties_golden",
        ),
    ),
    Clause(
        "S08.3",
        "Entry text is tag-neutralized.",
        tests=("tests/conformance/test_s07_neutralization.py::test_bullets_are_neutralized",),
    ),
    Clause(
        "S08.4",
        "Empty entries are dropped.",
        tests=(
            "tests/conformance/test_s08_bullets.py::test_empty_entries_dropped",
            "tests/conformance/test_s08_bullets.py::test_bullets_with_breaks_duplicates_empties_golden",
        ),
    ),
    Clause(
        "S08.5",
        "Exact duplicates are dropped, the first occurrence kept.",
        tests=(
            "tests/conformance/test_s08_bullets.py::test_duplicates_dropped_first_kept",
            "tests/conformance/test_s08_bullets.py::test_duplicates_after_folding_are_dropped",
            "tests/conformance/test_s08_bullets.py::test_duplicate_suggestions_dropped",
        ),
    ),
    Clause(
        "S08.6",
        "A block with no entries is omitted.",
        tests=("tests/conformance/test_s08_bullets.py::test_block_without_entries_is_omitted",),
    ),
    # -- 9. Errors ---------------------------------------------------------------------
    Clause(
        "S09.1",
        "Errors the model should read are results with isError true, never JSON-RPC errors.",
        tests=("tests/e2e/test_transports.py::test_errors_are_results_the_model_reads",),
    ),
    Clause(
        "S09.2",
        "Error element text escapes & and <; attribute values escape all five characters.",
        tests=(
            "tests/conformance/test_s09_errors.py::test_escaping_golden",
            "tests/conformance/test_s09_errors.py::test_envelopes_parse_back",
            "tests/conformance/test_s09_call_errors.py::test_hostile_input_is_escaped_in_the_envelope",
            "tests/conformance/test_properties.py::test_error_envelope_cannot_be_forged",
        ),
    ),
    Clause(
        "S09.3",
        "<tool_error> follows its template; optional elements appear only when set, in template order.",
        tests=(
            "tests/conformance/test_s09_errors.py::test_tool_error_with_every_optional_element",
            "tests/conformance/test_s09_errors.py::test_tool_error_minimal",
            "tests/conformance/test_s09_errors.py::test_optional_elements_keep_their_order",
            "tests/conformance/test_s09_errors.py::test_retry_after_zero_is_kept",
        ),
    ),
    Clause(
        "S09.4",
        "severity is warning, error or critical; a warning has isError false.",
        tests=(
            "tests/conformance/test_s09_errors.py::test_warning_is_not_an_error",
            "tests/conformance/test_s09_errors.py::test_error_and_critical_are_errors",
            "tests/conformance/test_s09_errors.py::test_unknown_severity_raises",
            "tests/unit/_present/test_failures.py::test_warning_tool_error_is_not_an_error",
        ),
    ),
    Clause(
        "S09.5",
        "Helpers error(message, code=None), tool_error(code, …) and required(field) build error envelopes.",
        tests=(
            "tests/conformance/test_s09_errors.py::test_error_helper",
            "tests/conformance/test_s09_errors.py::test_required_helper",
            "tests/conformance/test_s09_errors.py::test_tool_error_with_every_optional_element",
        ),
    ),
    Clause(
        "S09.6",
        "Routing failures are MISSING_DISCRIMINATOR, UNKNOWN_ACTION and UNKNOWN_TOOL; any user code is sent as given.",
        tests=(
            "tests/conformance/test_s09_call_errors.py::test_missing_discriminator",
            "tests/conformance/test_s09_call_errors.py::test_unknown_action_lists_the_actions",
            "tests/conformance/test_s09_call_errors.py::test_non_string_action_is_unknown",
            "tests/conformance/test_s09_call_errors.py::test_unknown_tool_lists_the_tools",
            "tests/conformance/test_s09_call_errors.py::test_tool_error_becomes_its_envelope",
        ),
    ),
    Clause(
        "S09.7",
        "The testing helper reports VALIDATION_ERROR for a <validation_error> response.",
        tests=(
            "tests/conformance/test_s09_call_errors.py::test_wrong_types",
            "tests/unit/_wire/test_parse.py::test_parse_error_reads_validation_error",
        ),
    ),
    Clause(
        "S09.8",
        "Input validation failures are <validation_error> results: one <field> per dotted path (what, You sent, fix), then <recovery>.",
        tests=(
            "tests/conformance/test_s09_errors.py::test_validation_error_template",
            "tests/conformance/test_s09_call_errors.py::test_wrong_types",
            "tests/conformance/test_s09_call_errors.py::test_nested_fields_use_dotted_paths",
            "tests/conformance/test_s09_call_errors.py::test_missing_required_field_of_one_action",
            "tests/conformance/test_s09_call_errors.py::test_arguments_that_are_not_an_object",
        ),
    ),
    Clause(
        "S09.9",
        "A long sent value is cut to 50 characters.",
        tests=(
            "tests/conformance/test_s09_call_errors.py::test_megabyte_string_echo_is_cut",
            "tests/conformance/test_s09_call_errors.py::test_thousand_levels_where_an_int_is_expected",
            "tests/unit/_tools/test_validation.py::test_preview",
        ),
    ),
    Clause(
        "S09.10",
        "Unknown fields are reported by name.",
        tests=(
            "tests/conformance/test_s09_call_errors.py::test_unknown_field_is_reported_by_name",
        ),
    ),
    Clause(
        "S09.11",
        "A handler's exception is INTERNAL_ERROR naming tool and action, with no traceback, path or repr; the log has the traceback.",
        tests=(
            "tests/conformance/test_s09_call_errors.py::test_handler_exception_never_reaches_the_wire",
            "tests/unit/_present/test_failures.py::test_defects_are_logged_with_tracebacks",
        ),
    ),
    Clause(
        "S09.12",
        "A Presenter failure is PRESENTER_ERROR whose recovery says retrying the same call will not help.",
        tests=(
            "tests/conformance/test_s09_call_errors.py::test_presenter_fed_bad_data",
            "tests/conformance/test_s09_presenter_failures.py::test_a_raising_callback_is_presenter_error",
        ),
    ),
    Clause(
        "S09.13",
        "A call to an action whose scopes the caller lacks is FORBIDDEN, before validation, naming only the missing scopes.",
        tests=(
            "tests/conformance/test_s09_access.py::test_forbidden_envelope",
            "tests/unit/_app/test_access.py::test_a_hidden_action_called_anyway_is_forbidden",
            "tests/e2e/test_auth_http.py::test_a_direct_call_to_a_hidden_action_is_forbidden",
        ),
    ),
    Clause(
        "S09.14",
        "A call over the rate limit is RATE_LIMITED with <retry_after>.",
        tests=(
            "tests/conformance/test_s09_access.py::test_rate_limited_envelope",
            "tests/unit/_app/test_middleware.py::test_rate_limit_refuses_past_the_burst_with_retry_after",
        ),
    ),
    Clause(
        "S09.15",
        "A handler past its action's timeout= is cancelled and the call is TIMEOUT naming tool, action and seconds.",
        tests=(
            "tests/conformance/test_s09_access.py::test_timeout_envelope",
            "tests/unit/_app/test_middleware.py::test_timeout_cancels_the_handler_and_answers_timeout",
        ),
    ),
    Clause(
        "S09.16",
        "A call needing a client feature the client lacks is UNSUPPORTED_BY_CLIENT, before the handler when declared.",
        tests=(
            "tests/conformance/test_s09_client.py::test_unsupported_by_client_envelope",
            "tests/conformance/test_s09_client.py::test_proceed_policy_runs_unasked",
            "tests/unit/_serve/test_sdk_client.py::test_a_declared_requirement_is_refused_as_each_era_says",
        ),
    ),
    Clause(
        "S09.17",
        "A confirm= action runs only on an accepted confirm: true; anything else is NOT_CONFIRMED.",
        tests=(
            "tests/conformance/test_s09_client.py::test_not_confirmed_envelope",
            "tests/conformance/test_s09_client.py::test_confirmed_runs",
        ),
    ),
    Clause(
        "S09.18",
        "An accepted answer that does not fit the schema is INVALID_ANSWER, naming the fields only.",
        tests=("tests/conformance/test_s09_client.py::test_invalid_answer_envelope",),
    ),
    Clause(
        "S09.19",
        "A call the workflow does not allow in the caller's state is OUT_OF_STATE, naming the state, the states needed and the actions leading there.",
        tests=(
            "tests/conformance/test_s09_access.py::test_out_of_state_envelope",
            "tests/unit/_app/test_workflow.py::test_workflow_refuses_an_action_outside_its_state_naming_the_way_there",
        ),
    ),
    Clause(
        "S09.20",
        "A call past its action's concurrency=, or a caller's second destructive call at once when serialized, is BUSY with <retry_after>.",
        tests=(
            "tests/conformance/test_s09_access.py::test_busy_envelope",
            "tests/unit/_app/test_concurrency.py::test_concurrency_serializes_destructive_calls_per_caller",
        ),
    ),
    Clause(
        "S09.21",
        "A page cursor this call cannot use is INVALID_CURSOR, naming the tool and action, with a recovery that starts over (section 5.4).",
        tests=(
            "tests/conformance/test_s05_paging.py::test_a_changed_cursor_envelope",
            "tests/conformance/test_s05_paging.py::test_another_query_envelope",
        ),
    ),
    # -- 10. TOON ----------------------------------------------------------------------
    Clause(
        "S10.1",
        "toon_success writes TOON with the '|' delimiter; a uniform flat list is a [N|]{k1|k2|…}: header and one indented row per item.",
        tests=(
            "tests/conformance/test_s10_toon.py::test_uniform_rows_golden",
            "tests/conformance/test_s10_toon.py::test_nested_object_golden",
            "tests/unit/_wire/test_datablock.py::test_to_toon_uses_pipe_delimiter_and_round_trips",
        ),
    ),
    Clause(
        "S10.2",
        "Decoding the TOON text gives back the data (a str as a str), except that a reserved-tag string comes back neutralized (&lt;).",
        tests=(
            "tests/conformance/test_s10_toon.py::test_decodes_back_to_the_data",
            "tests/conformance/test_s10_toon.py::test_reserved_tag_comes_back_neutralized",
            "tests/conformance/test_s07_neutralization.py::test_toon_text_is_neutralized",
            "tests/conformance/test_properties.py::test_toon_decodes_to_the_neutralized_data",
        ),
    ),
    Clause(
        "S10.3",
        "On uniform lists TOON takes roughly half the tokens of indented JSON.",
        tests=(
            "tests/conformance/test_s10_toon.py::test_toon_is_shorter_than_json_for_uniform_rows",
        ),
    ),
    Clause(
        "S10.4",
        "toon_description(): the description line, a blank line, then one TOON row {action, desc, required} per action.",
        tests=(
            "tests/conformance/test_s10_toon_description.py::test_toon_description_exact",
            "tests/conformance/test_s10_toon_description.py::test_toon_rows_decode_to_the_actions",
            "tests/conformance/test_s10_toon_description.py::test_hostile_description_is_neutralized",
        ),
    ),
    Clause(
        "S10.5",
        'required is the comma-joined list of required parameters, "" when none.',
        tests=(
            "tests/conformance/test_s10_toon_description.py::test_required_is_comma_joined_and_empty_when_none",
        ),
    ),
    Clause(
        "S10.6",
        "A destructive action's desc is prefixed [DESTRUCTIVE] so the table stays tabular.",
        tests=(
            "tests/conformance/test_s10_toon_description.py::test_toon_description_exact",
            "tests/conformance/test_s10_toon_description.py::test_toon_rows_decode_to_the_actions",
        ),
    ),
    Clause(
        "S10.7",
        "toon_success and the TOON data format may use the ',' delimiter (header [N]{k1,k2}:) or a tab instead of '|'.",
        tests=(
            "tests/conformance/test_s10_toon_options.py::test_toon_delimiters",
            "tests/unit/_present/test_style.py::test_toon_delimiters_round_trip",
        ),
    ),
    Clause(
        "S10.8",
        "With action groups, the TOON description adds a blank line and a groups[N|]{group|desc}: table.",
        tests=(
            "tests/conformance/test_s10_toon_options.py::test_groups_follow_the_toon_action_table",
            "tests/unit/_tools/test_exposition.py::test_groups_in_the_toon_description",
        ),
    ),
    # -- 11. _select -------------------------------------------------------------------
    Clause(
        "S11.1",
        "enable_select() adds the optional _select array parameter, exactly as specified, to every action's input.",
        tests=(
            "tests/conformance/test_s11_select.py::test_select_property_exact",
            "tests/conformance/test_s11_select.py::test_select_is_optional",
            "tests/conformance/test_s13_tools.py::test_grouped_schema_layout",
            "tests/unit/_tools/test_schema.py::test_flat_schema_with_select",
        ),
    ),
    Clause(
        "S11.2",
        "The enum is the sorted union of the top-level keys of every action's Presenter or output schema.",
        tests=(
            "tests/conformance/test_s11_select.py::test_select_property_exact",
            "tests/conformance/test_s11_select_data.py::test_select_keys_are_the_data_blocks_top_level_keys",
            "tests/conformance/test_s11_select_data.py::test_declared_embed_key_is_listed_once",
            "tests/unit/_tools/test_tool.py::test_select_keys_union_is_sorted",
        ),
    ),
    Clause(
        "S11.3",
        "The data block keeps only the selected top-level keys, in schema order, per item for a list.",
        tests=(
            "tests/conformance/test_s11_select.py::test_select_trims_the_data_block_only",
            "tests/conformance/test_s11_select.py::test_select_on_a_list_trims_each_item",
            "tests/conformance/test_s11_select.py::test_select_trims_structured_content_and_its_text",
            "tests/conformance/test_s11_select_data.py::test_select_on_an_object_golden",
            "tests/conformance/test_s11_select_data.py::test_select_on_a_list_golden",
            "tests/conformance/test_s11_select_data.py::test_select_keeps_request_order_out_of_the_data",
        ),
    ),
    Clause(
        "S11.4",
        "UI blocks, rules, suggestions and embeds are still computed on the full object.",
        tests=(
            "tests/conformance/test_s11_select.py::test_select_trims_the_data_block_only",
            "tests/conformance/test_s11_select_data.py::test_select_on_an_object_golden",
            "tests/conformance/test_s11_select_data.py::test_select_an_embedded_key",
        ),
    ),
    Clause(
        "S11.5",
        "An empty _select means everything.",
        tests=(
            "tests/conformance/test_s11_select.py::test_empty_select_means_everything",
            "tests/conformance/test_s11_select_data.py::test_no_or_empty_select_means_everything",
        ),
    ),
    Clause(
        "S11.6",
        "A key outside the enum is a validation error listing the allowed keys.",
        tests=("tests/conformance/test_s11_select.py::test_select_unknown_key",),
    ),
    Clause(
        "S11.7",
        "An action without a response schema ignores _select.",
        tests=("tests/conformance/test_s11_select.py::test_action_without_schema_ignores_select",),
    ),
    Clause(
        "S11.8",
        "A RootModel over a model contributes the model's fields to the _select enum.",
        tests=(
            "tests/conformance/test_s05_rows.py::test_a_root_model_masks_and_selects_as_its_model",
            "tests/unit/test_absent_fields.py::test_root_model_select_enum_names_the_model_fields",
        ),
    ),
    # -- 12. Structured content --------------------------------------------------------
    Clause(
        "S12.1",
        "Presenters never produce structuredContent.",
        tests=(
            "tests/conformance/test_s13_tools.py::test_side_door_is_exact_and_off_the_wire",
            "tests/unit/_tools/test_action.py::test_presenter_and_output_schema_exclude_each_other",
        ),
    ),
    Clause(
        "S12.2",
        "success_structured(data) returns the JSON text block plus the same value as structuredContent.",
        tests=(
            "tests/conformance/test_s12_structured.py::test_object_golden_text_and_structured_content",
            "tests/conformance/test_s12_structured.py::test_model_is_serialized_in_json_mode",
            "tests/conformance/test_s12_structured.py::test_structured_content_is_json_compatible",
        ),
    ),
    Clause(
        "S12.3",
        "output_schema=Model is advertised as outputSchema in tools/list.",
        tests=("tests/conformance/test_s12_output_schema.py::test_output_schema_is_advertised",),
    ),
    Clause(
        "S12.4",
        "The server validates the value against the output schema before sending; a mismatch is INTERNAL_ERROR, logged.",
        tests=(
            "tests/conformance/test_s12_output_schema.py::test_plain_value_becomes_structured",
            "tests/conformance/test_s12_output_schema.py::test_undeclared_fields_are_not_sent",
            "tests/conformance/test_s12_output_schema.py::test_success_structured_return_is_checked",
            "tests/conformance/test_s12_output_schema.py::test_handler_built_structured_content_is_the_schemas_view",
            "tests/conformance/test_s12_output_schema.py::test_mismatch_is_internal_error",
        ),
    ),
    Clause(
        "S12.5",
        'A non-object value is wrapped as {"result": value} in both the schema and structuredContent.',
        tests=(
            "tests/conformance/test_s12_output_schema.py::test_non_object_schema_is_wrapped",
            "tests/conformance/test_s12_output_schema.py::test_wrapped_value_text_matches_structured_content",
            "tests/conformance/test_s12_structured.py::test_non_object_is_wrapped_as_result",
        ),
    ),
    Clause(
        "S12.6",
        "The text block is always the JSON of exactly the structuredContent object.",
        tests=(
            "tests/conformance/test_s12_structured.py::test_object_golden_text_and_structured_content",
            "tests/conformance/test_s12_structured.py::test_text_and_structured_content_agree_with_reserved_tags",
            "tests/conformance/test_s12_output_schema.py::test_wrapped_value_text_matches_structured_content",
            "tests/conformance/test_s12_output_schema.py::test_handler_built_structured_content_is_the_schemas_view",
            "tests/conformance/test_s11_select.py::test_select_trims_structured_content_and_its_text",
        ),
    ),
    Clause(
        "S12.7",
        "A grouped tool advertises outputSchema only if every action declares one.",
        tests=(
            "tests/conformance/test_s12_output_schema.py::test_grouped_tool_advertises_only_when_every_action_declares",
            "tests/conformance/test_s12_output_schema.py::test_grouped_tool_with_one_shared_schema",
        ),
    ),
    Clause(
        "S12.8",
        "An error envelope from an action with an output schema is sent with isError: true.",
        tests=(
            "tests/conformance/test_s12_output_schema.py::test_a_warning_on_a_structured_action_is_sent_as_an_error",
        ),
    ),
    # -- 13. Handler return values, tools and the testing side door --------------------
    Clause(
        "S13.1",
        "Wrapping rule 1: a ToolResponse passes untouched.",
        tests=(
            "tests/conformance/test_s13_wrapping.py::test_tool_response_passes_untouched",
            "tests/conformance/test_s13_tools.py::test_built_response_passes_untouched",
            "tests/conformance/test_s13_tools.py::test_success_structured_return_keeps_structured_content",
            "tests/conformance/test_s13_tools.py::test_error_response_return_passes",
        ),
    ),
    Clause(
        "S13.2",
        "Rule 2: an unbuilt ResponseBuilder is built (and not presented).",
        tests=(
            "tests/conformance/test_s13_wrapping.py::test_unbuilt_builder_is_built",
            "tests/conformance/test_s13_tools.py::test_builder_is_not_presented",
        ),
    ),
    Clause(
        "S13.3",
        "Rule 3: None becomes the text OK, even when the action has a Presenter.",
        tests=(
            "tests/conformance/test_s13_wrapping.py::test_none_is_ok",
            "tests/conformance/test_s13_tools.py::test_presenter_renders_plain_values_but_not_none",
            "tests/conformance/test_s03_data_block.py::test_none_is_ok",
        ),
    ),
    Clause(
        "S13.4",
        "Rule 5: otherwise the action's Presenter renders the value.",
        tests=(
            "tests/conformance/test_s13_wrapping.py::test_presenter_renders_other_values",
            "tests/conformance/test_s13_tools.py::test_presenter_renders_plain_values_but_not_none",
        ),
    ),
    Clause(
        "S13.5",
        'Rule 6: otherwise success(value); a dict that looks like {"content": [...]} is data.',
        tests=(
            "tests/conformance/test_s13_wrapping.py::test_anything_else_is_success",
            "tests/conformance/test_s13_wrapping.py::test_content_lookalike_dict_is_data",
            "tests/conformance/test_s13_tools.py::test_return_values",
        ),
    ),
    Clause(
        "S13.6",
        "Grouped exposition: one tool with a required action enum in definition order, then the union of parameters, then _select.",
        tests=(
            "tests/conformance/test_s13_tools.py::test_tools_list_golden",
            "tests/conformance/test_s13_tools.py::test_tools_list_order_and_names",
            "tests/conformance/test_s13_tools.py::test_grouped_schema_layout",
        ),
    ),
    Clause(
        "S13.7",
        "A parameter's description says which actions use it and where it is required.",
        tests=(
            "tests/conformance/test_s13_tools.py::test_grouped_schema_layout",
            "tests/conformance/test_s13_tools.py::test_parameter_required_by_every_action_is_top_level_required",
            "tests/conformance/test_s13_tools.py::test_mixed_requirement_is_described",
        ),
    ),
    Clause(
        "S13.8",
        "The same parameter name with different base types in two actions is rejected at definition time; optionality and constraints may differ.",
        tests=(
            "tests/conformance/test_s13_tools.py::test_conflicting_parameter_types_rejected_at_definition",
            "tests/unit/_tools/test_tool.py::test_conflicts_are_found_among_many_actions",
            "tests/unit/_tools/test_schema.py::test_constraints_are_not_part_of_the_type",
            "tests/unit/_tools/test_tool.py::test_shared_parameter_keeps_each_actions_own_validation",
        ),
    ),
    Clause(
        "S13.9",
        "Top-level required holds action and what every action requires; per-action requirements are checked at call time.",
        tests=(
            "tests/conformance/test_s13_tools.py::test_grouped_schema_layout",
            "tests/conformance/test_s13_tools.py::test_parameter_required_by_every_action_is_top_level_required",
            "tests/conformance/test_s09_call_errors.py::test_missing_required_field_of_one_action",
        ),
    ),
    Clause(
        "S13.10",
        "Flat exposition (opt-in): one tool per action named {tool}_{action}, the separator configurable.",
        tests=(
            "tests/conformance/test_s13_tools.py::test_tools_list_order_and_names",
            "tests/conformance/test_s13_tools.py::test_flat_names_use_the_separator",
        ),
    ),
    Clause(
        "S13.11",
        "readOnlyHint when every action is read-only, destructiveHint when any is destructive, idempotentHint when all are idempotent.",
        tests=("tests/conformance/test_s13_tools.py::test_annotations_aggregate",),
    ),
    Clause(
        "S13.12",
        "Every response built by a Presenter or ResponseBuilder carries its structured view out of band.",
        tests=(
            "tests/conformance/test_s13_side_door.py::test_view_reachable_from_every_built_response",
            "tests/conformance/test_s13_side_door.py::test_view_holds_the_parts_exactly",
            "tests/conformance/test_s13_side_door.py::test_ui_blocks_in_view_are_values",
            "tests/conformance/test_properties.py::test_view_holds_what_went_in",
        ),
    ),
    Clause(
        "S13.13",
        "The view is never serialized: no JSON, model_dump or MCP transport sees it.",
        tests=(
            "tests/conformance/test_s13_side_door.py::test_view_never_serialized",
            "tests/conformance/test_s13_side_door.py::test_view_data_is_the_raw_value_not_the_wire_text",
            "tests/conformance/test_s13_side_door.py::test_response_fields_are_only_the_wire_parts",
            "tests/conformance/test_s13_side_door.py::test_copies_do_not_carry_the_view",
            "tests/conformance/test_s13_side_door.py::test_leak_detector_catches_a_leaked_view",
            "tests/conformance/test_s13_tools.py::test_results_never_hold_the_view",
        ),
    ),
    Clause(
        "S13.14",
        "mcpfusion.testing reads the view, so result.data, system_rules and ui_blocks are exact without parsing XML.",
        tests=(
            "tests/conformance/test_s13_tools.py::test_side_door_is_exact_and_off_the_wire",
            "tests/unit/testing/test_tester.py::test_side_door_parts",
        ),
    ),
    Clause(
        "S13.15",
        "Each action validates its own parameters; constraints that differ are written per action in the description.",
        tests=(
            "tests/conformance/test_s13_exposition.py::test_differing_constraints_are_written_per_action",
            "tests/unit/_tools/test_schema.py::test_differing_constraints_are_described_per_action",
            "tests/unit/_tools/test_schema.py::test_optional_in_one_action_and_required_in_another",
        ),
    ),
    Clause(
        "S13.16",
        "tool.group(name) names its actions {group}.{action}; the description lists ungrouped actions, then '{group} actions: {description}' and its bullets.",
        tests=(
            "tests/conformance/test_s13_exposition.py::test_groups_and_instructions_in_the_description",
            "tests/unit/_tools/test_exposition.py::test_group_actions_have_dotted_names_and_their_own_heading",
            "tests/unit/_tools/test_exposition.py::test_bad_groups",
        ),
    ),
    Clause(
        "S13.17",
        "A tool's instructions close its description (each flat tool's too) after a blank line.",
        tests=(
            "tests/conformance/test_s13_exposition.py::test_groups_and_instructions_in_the_description",
            "tests/unit/_tools/test_exposition.py::test_flat_tools_carry_the_instructions",
        ),
    ),
    Clause(
        "S13.18",
        "Split exposition lists the read-only actions and the others as two grouped tools, each with its own enum, parameters, _select and annotations.",
        tests=(
            "tests/conformance/test_s13_exposition.py::test_split_tools_list_golden",
            "tests/unit/_tools/test_exposition.py::test_split_lists_reads_and_writes_as_two_honest_tools",
            "tests/unit/_tools/test_exposition.py::test_split_select_follows_each_half",
            "tests/unit/_tools/test_exposition.py::test_split_claims_both_names",
        ),
    ),
    Clause(
        "S13.19",
        "An action sent to the split half that does not hold it is UNKNOWN_ACTION with a recovery naming the tool that does.",
        tests=(
            "tests/conformance/test_s13_exposition.py::test_split_routes_and_names_the_other_half",
            "tests/unit/_tools/test_exposition.py::test_split_routes_each_action_through_its_half",
        ),
    ),
    Clause(
        "S13.20",
        "Lean definitions: optional parameters as their plain type (null still accepted), no action description, no redundant usage notes, enum types, derived titles, $defs used once or default hints.",
        tests=(
            "tests/conformance/test_s13_exposition.py::test_split_tools_list_golden",
            "tests/conformance/test_s13_exposition.py::test_lean_optional_parameters_still_accept_null",
            "tests/unit/_tools/test_lean.py::test_lean_grouped_schema",
            "tests/unit/_tools/test_lean.py::test_lean_flat_schema",
            "tests/unit/_tools/test_lean.py::test_lean_output_schema_and_annotations",
            "tests/unit/_tools/test_lean.py::test_a_definition_referenced_once_is_written_in_place",
        ),
    ),
    Clause(
        "S13.21",
        "Suggestion targets and available actions are sent as the exposition lists them.",
        tests=(
            "tests/conformance/test_s13_exposition.py::test_targets_are_written_as_listed",
            "tests/unit/_tools/test_targets.py::test_under_flat_exposition_targets_are_the_flat_tool_names",
            "tests/unit/_tools/test_targets.py::test_available_actions_are_checked_and_spelled",
        ),
    ),
    Clause(
        "S13.22",
        "A Presenter's static suggestions naming no action are a definition error naming the suggestion and the known actions.",
        tests=(
            "tests/conformance/test_s13_exposition.py::test_static_targets_are_checked_with_the_catalog",
            "tests/unit/_tools/test_targets.py::test_static_suggestions_are_sent_and_checked_when_the_catalog_is_built",
        ),
    ),
    Clause(
        "S13.23",
        "A target naming nothing at call time is dropped (an empty suggestions block omitted) and logged once per target.",
        tests=(
            "tests/conformance/test_s13_exposition.py::test_unknown_targets_are_dropped_and_logged_once",
            "tests/unit/_tools/test_targets.py::test_an_unknown_dynamic_target_is_dropped_and_logged_once",
            "tests/unit/_tools/test_targets.py::test_when_every_suggestion_is_dropped_the_block_goes",
        ),
    ),
    Clause(
        "S13.24",
        "Rule 4: an image, a sound, an embedded resource or a resource link (or a list of only those) is the content itself.",
        tests=(
            "tests/conformance/test_s13_content.py::test_a_handler_returning_content_sends_it_alone",
            "tests/conformance/test_s13_content.py::test_a_presenter_ui_callback_attaches_an_image_after_the_text",
        ),
    ),
    Clause(
        "S13.25",
        "A resource read sends the blocks in section 2 order, the data block first typed by its format, then other content; bytes are one blob.",
        tests=(
            "tests/conformance/test_s13_content.py::test_a_resource_read_sends_the_blocks_in_order_typed_by_format",
            "tests/examples/test_billing_surface.py::test_the_invoice_resource_sends_what_get_invoice_sends",
        ),
    ),
    Clause(
        "S13.26",
        "A prompt sends one message per block, then one per other content item; a Presenter's view leaves UI out unless asked.",
        tests=(
            "tests/conformance/test_s13_content.py::test_a_prompt_sends_one_message_per_block_then_its_content",
            "tests/examples/test_billing_surface.py::test_collections_call_is_built_from_the_presenters",
        ),
    ),
    Clause(
        "S13.27",
        "A flat action's declared input_schema is its inputSchema as given (plus _select) and validates its calls, each violation a validation-error field; grouped tools refuse it.",
        tests=(
            "tests/unit/_tools/test_declared.py::test_the_declared_schema_is_advertised_as_given",
            "tests/unit/_tools/test_declared.py::test_select_is_added_to_a_declared_schema",
            "tests/unit/_tools/test_declared.py::test_invalid_arguments_are_validation_errors_naming_each_field",
            "tests/unit/_tools/test_declared.py::test_a_declared_schema_that_cannot_serve_is_a_definition_error",
        ),
    ),
    Clause(
        "S13.28",
        "openWorldHint only when an action declares open_world (true if any is, lean leaves true out); title after name and icons after inputSchema, only when declared.",
        tests=(
            "tests/unit/_tools/test_icon.py::test_a_tool_lists_its_title_and_icons",
            "tests/unit/_tools/test_icon.py::test_open_world_is_sent_when_any_action_declares_it",
            "tests/unit/_tools/test_icon.py::test_lean_definitions_send_only_a_closed_world",
        ),
    ),
    # -- 14. Deliberate differences from the product page ------------------------------
    Clause(
        "S14.1",
        "Titles, rules and content are escaped and neutralized, so data cannot forge directives.",
        tests=(
            "tests/conformance/test_s05_presenters.py::test_hostile_strings_are_neutralized_golden",
            "tests/conformance/test_properties.py::test_no_reserved_tag_is_forged",
        ),
    ),
    Clause(
        "S14.2",
        "None gives OK for every handler, and a declared Presenter always runs.",
        tests=(
            "tests/conformance/test_s13_wrapping.py::test_none_is_ok",
            "tests/conformance/test_s13_wrapping.py::test_presenter_renders_other_values",
        ),
    ),
    Clause(
        "S14.3",
        "Embeds merge child rules into one rules block, and the child owns its subtree of the data.",
        tests=(
            "tests/conformance/test_s06_embeds.py::test_child_rules_are_merged_parent_first_without_duplicates",
            "tests/conformance/test_s06_embeds.py::test_embed_in_a_single_parent_golden",
        ),
    ),
    Clause(
        "S14.4",
        "_select is validated and keeps schema order, not request order.",
        tests=(
            "tests/conformance/test_s11_select.py::test_select_unknown_key",
            "tests/conformance/test_s11_select_data.py::test_select_keeps_request_order_out_of_the_data",
        ),
    ),
    Clause(
        "S14.5",
        "TOON tool descriptions stay tabular for destructive actions.",
        tests=(
            "tests/conformance/test_s10_toon_description.py::test_toon_rows_decode_to_the_actions",
        ),
    ),
    Clause(
        "S14.6",
        "success_structured and output_schema exist.",
        tests=(
            "tests/conformance/test_s12_structured.py::test_object_golden_text_and_structured_content",
            "tests/conformance/test_s12_output_schema.py::test_output_schema_is_advertised",
        ),
    ),
    Clause(
        "S14.7",
        "fence() grows the backtick run when the body contains one.",
        tests=("tests/conformance/test_s04_ui_blocks.py::test_fence_grows_past_the_longest_run",),
    ),
    Clause(
        "S14.8",
        "Suggestions and available actions are checked against the app and written as the exposition lists them.",
        tests=(
            "tests/conformance/test_s13_exposition.py::test_targets_are_written_as_listed",
            "tests/conformance/test_s13_exposition.py::test_unknown_targets_are_dropped_and_logged_once",
        ),
    ),
    Clause(
        "S14.9",
        "Redaction also searches every other block, so a UI block cannot carry the real value.",
        tests=(
            "tests/conformance/test_s16_redaction.py::test_every_block_carries_the_censor_output",
        ),
    ),
    # -- 15. State sync -------------------------------------------------------------------
    Clause(
        "S15.1",
        "An action's state name is {tool}.{action}; a resource's is {scheme}.{name} from its URI.",
        tests=("tests/conformance/test_s15_state_sync.py::test_state_names_and_matching",),
    ),
    Clause(
        "S15.2",
        "invalidates patterns are dot-separated names, '*' standing for exactly one segment.",
        tests=(
            "tests/conformance/test_s15_state_sync.py::test_state_names_and_matching",
            "tests/conformance/test_s15_state_sync.py::test_bad_patterns_and_options_raise_where_written",
        ),
    ),
    Clause(
        "S15.3",
        "A pattern matching no state name, or invalidates on a read-only action, is a definition error.",
        tests=(
            "tests/conformance/test_s15_state_sync.py::test_patterns_matching_nothing_are_a_definition_error",
            "tests/conformance/test_s15_state_sync.py::test_bad_patterns_and_options_raise_where_written",
        ),
    ),
    Clause(
        "S15.4",
        'A successful call ends with one <cache_invalidation caused_by="{tool}.{action}"> block, after every other kind.',
        tests=(
            "tests/conformance/test_s15_state_sync.py::test_success_ends_with_the_invalidation_block",
            "tests/conformance/test_s15_state_sync.py::test_builder_entries_come_first_and_the_block_is_last",
        ),
    ),
    Clause(
        "S15.5",
        "caused_by is escaped like every attribute.",
        tests=(
            "tests/conformance/test_s15_state_sync.py::test_caused_by_is_escaped_like_every_attribute",
            "tests/conformance/test_s15_state_sync.py::test_a_builder_returned_by_an_action_is_caused_by_it",
        ),
    ),
    Clause(
        "S15.6",
        "Entries follow section 8, the response's own first, then the action's patterns in declaration order.",
        tests=(
            "tests/conformance/test_s15_state_sync.py::test_entries_follow_the_bullet_rules",
            "tests/conformance/test_s15_state_sync.py::test_builder_entries_come_first_and_the_block_is_last",
        ),
    ),
    Clause(
        "S15.7",
        "A failed call emits no invalidation block and notifies nobody.",
        tests=(
            "tests/conformance/test_s15_state_sync.py::test_a_failed_call_emits_no_block_and_notifies_nobody",
        ),
    ),
    Clause(
        "S15.8",
        "After a successful mutation, subscribers of matching resource URIs get notifications/resources/updated, same tenant only.",
        tests=(
            "tests/unit/_serve/test_sdk_client.py::test_updates_go_to_matching_subscribers_of_the_same_tenant",
            "tests/unit/_serve/test_sdk_client.py::test_listen_streams_hear_their_tenant_only",
            "tests/e2e/test_surface_e2e.py::test_a_subscriber_hears_of_a_mutation",
        ),
    ),
    Clause(
        "S15.9",
        "stale or fresh_for (not both) mark the description: grouped bullet, TOON desc, flat description.",
        tests=(
            "tests/conformance/test_s15_state_sync.py::test_freshness_markers_in_every_description_form",
            "tests/conformance/test_s15_state_sync.py::test_bad_patterns_and_options_raise_where_written",
        ),
    ),
    # -- 16. Redaction -----------------------------------------------------------------
    Clause(
        "S16.1",
        "A Presenter may name fields to redact by path, '*' for any key and '[*]' for any list item.",
        tests=(
            "tests/conformance/test_s16_redaction.py::test_paths_name_keys_any_key_and_any_item",
            "tests/conformance/test_s16_redaction.py::test_a_malformed_path_raises_where_it_is_written",
            "tests/conformance/test_s16_redaction.py::test_a_path_naming_no_field_stops_the_app",
        ),
    ),
    Clause(
        "S16.2",
        "Callbacks receive the real values of redacted fields.",
        tests=("tests/conformance/test_s16_redaction.py::test_callbacks_receive_the_real_values",),
    ),
    Clause(
        "S16.3",
        "In every block (data in any format, structured content, UI, embeds, rules, suggestions) a redacted value is the censor's output, [REDACTED] by default.",
        tests=(
            "tests/conformance/test_s16_redaction.py::test_every_block_carries_the_censor_output",
            "tests/conformance/test_s16_redaction.py::test_a_censor_function_and_none",
        ),
    ),
    Clause(
        "S16.4",
        "Exact string forms of redacted values in view (4+ characters, 4+ digits) are censored in the data's other strings and, after rendering, in every non-data block.",
        tests=(
            "tests/conformance/test_s16_redaction.py::test_no_redacted_value_reaches_the_client",
            "tests/conformance/test_s16_redaction.py::test_a_redacted_value_in_another_field_is_censored",
            "tests/conformance/test_s16_redaction.py::test_short_values_are_not_searched",
            "tests/conformance/test_s16_redaction.py::test_parts_added_after_the_presenter_are_searched_too",
        ),
    ),
    # -- 17. Byte cap -----------------------------------------------------------------
    Clause(
        "S17.1",
        "Fusion(max_bytes=) caps every answer, an action's max_bytes= wins; a cap is a positive int, checked at definition.",
        tests=(
            "tests/conformance/test_s17_byte_cap.py::test_an_actions_cap_wins_over_the_apps",
            "tests/conformance/test_s17_byte_cap.py::test_a_cap_that_is_no_positive_int_fails_at_definition",
        ),
    ),
    Clause(
        "S17.2",
        "The size is the UTF-8 bytes of the text items; an answer within its cap, and any error envelope, is sent unchanged.",
        tests=(
            "tests/conformance/test_s17_byte_cap.py::test_an_answer_within_its_cap_is_sent_unchanged",
            "tests/conformance/test_s17_byte_cap.py::test_errors_are_sent_whole",
        ),
    ),
    Clause(
        "S17.3",
        "Over the cap, UI blocks and embeds are left out whole, the last first; data, directives, rules and suggestions stay.",
        tests=(
            "tests/conformance/test_s17_byte_cap.py::test_ui_blocks_go_first_the_last_first",
            "tests/conformance/test_s17_byte_cap.py::test_a_handlers_response_loses_its_ui_block_first",
        ),
    ),
    Clause(
        "S17.4",
        "Still over, a returned list is answered again from its longest leading run of whole rows (one at least) that fits, in every format, structured content still valid against outputSchema.",
        tests=(
            "tests/conformance/test_s17_byte_cap.py::test_rows_go_next_whole_and_leading",
            "tests/conformance/test_s17_byte_cap.py::test_every_cap_keeps_the_data_decodable_in_every_format",
            "tests/conformance/test_s17_byte_cap.py::test_structured_content_still_fits_the_output_schema",
            "tests/conformance/test_s17_byte_cap.py::test_a_row_too_large_alone_ends_the_run_before_it",
            "tests/e2e/test_byte_cap_e2e.py::test_a_capped_answer_over_http_is_whole_and_valid",
        ),
    ),
    Clause(
        "S17.5",
        "The invalidation block is added after the cap, not counted.",
        tests=(
            "tests/conformance/test_s17_byte_cap.py::test_the_invalidation_block_is_added_after_the_cap",
        ),
    ),
    Clause(
        "S17.6",
        "What nothing brings under the cap is TOO_LARGE naming tool, action, size and cap.",
        tests=(
            "tests/conformance/test_s17_byte_cap.py::test_a_value_too_large_alone_is_too_large",
            "tests/conformance/test_s17_byte_cap.py::test_too_large_envelope",
        ),
    ),
    Clause(
        "S17.7",
        "A shortened answer's first UI block is the unannotated summary notice naming the cap, the UI blocks and the rows left out.",
        tests=(
            "tests/conformance/test_s17_byte_cap.py::test_ui_blocks_go_first_the_last_first",
            "tests/conformance/test_s17_byte_cap.py::test_rows_go_next_whole_and_leading",
        ),
    ),
    # -- 18. List pages ----------------------------------------------------------------
    Clause(
        "S18.1",
        "With a page size N the four lists answer at most N of the caller's visible entries a page, with nextCursor; following it lists each once.",
        tests=(
            "tests/unit/_serve/test_paging.py::test_pages_cover_the_list_once_in_order",
            "tests/unit/_serve/test_paging.py::test_every_list_is_paged_through_the_sdk",
            "tests/unit/_serve/test_paging.py::test_an_admin_sees_its_own_pages",
            "tests/unit/_serve/test_paging.py::test_a_workflow_pages_each_callers_own_list",
            "tests/e2e/test_paged_lists.py::test_the_client_walks_every_page_of_every_list",
        ),
    ),
    Clause(
        "S18.2",
        "Without a page size one page lists everything, without nextCursor.",
        tests=(
            "tests/unit/_serve/test_paging.py::test_without_a_page_size_one_page_holds_everything",
            "tests/unit/_serve/test_paging.py::test_a_bogus_cursor_is_refused_without_paging",
        ),
    ),
    Clause(
        "S18.3",
        "A cursor the server did not make for the list, past its end, or sent when nothing is paged is JSON-RPC -32602 'Invalid cursor'.",
        tests=(
            "tests/unit/_serve/test_paging.py::test_a_cursor_this_server_did_not_make_is_refused",
            "tests/unit/_serve/test_paging.py::test_any_cursor_is_refused_when_nothing_is_paged",
            "tests/unit/_serve/test_paging.py::test_a_bogus_cursor_is_refused_on_every_list",
        ),
    ),
    Clause(
        "S18.4",
        "A cursor names the list's version, so any process with the same catalog takes it and one from before the list changed is -32602 'Stale cursor'.",
        tests=(
            "tests/unit/_serve/test_paging.py::test_a_cursor_pages_on_any_worker",
            "tests/e2e/test_paged_lists.py::test_a_cursor_from_one_server_process_pages_on_another",
            "tests/unit/_serve/test_paging.py::test_a_cursor_from_before_the_list_changed_is_stale",
            "tests/unit/_serve/test_paging.py::test_a_cursor_from_before_a_tool_was_enabled_is_stale",
        ),
    ),
    Clause(
        "S18.5",
        "Every serving path (stdio, HTTP, the hot paths, both eras) answers a page alike.",
        tests=(
            "tests/unit/_serve/test_paging.py::test_the_stdio_hot_path_sends_the_sdks_pages",
            "tests/e2e/test_paged_lists.py::test_the_http_hot_path_sends_the_sdks_first_page",
        ),
    ),
)
"""Every clause of SPEC.md, in SPEC order."""
