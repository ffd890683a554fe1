"""The formula bar's line editor: spreadsheet-style replace-on-type, readline keys."""

from __future__ import annotations

from planner.tui.state.editline import LineBuffer


def typed(buffer: LineBuffer, *keys: str) -> LineBuffer:
    for key in keys:
        buffer.press(key, key if len(key) == 1 else None)
    return buffer


def test_first_character_replaces_the_value_then_types_at_the_cursor() -> None:
    buffer = typed(LineBuffer.of("6"), "1", "2", "8")
    assert (buffer.text, buffer.cursor, buffer.fresh) == ("128", 3, False)


def test_a_cursor_key_keeps_the_value_for_editing() -> None:
    buffer = typed(LineBuffer.of("4096"), "left", "left", "5")
    assert (buffer.text, buffer.cursor) == ("40596", 3)
    assert typed(LineBuffer.of("4096"), "home", "1").text == "14096"
    assert typed(LineBuffer.of("4096"), "home", "end", "1").text == "40961"
    assert typed(LineBuffer.of("4096"), "ctrl+a", "delete").text == "096"


def test_a_deleting_key_clears_a_fresh_value() -> None:
    for key in ("backspace", "delete", "ctrl+u", "ctrl+k", "ctrl+w"):
        buffer = typed(LineBuffer.of("8192"), key)
        assert (buffer.text, buffer.cursor, buffer.fresh) == ("", 0, False), key


def test_deleting_keys_after_editing() -> None:
    assert typed(LineBuffer.of("8192"), "end", "backspace", "backspace").text == "81"
    assert typed(LineBuffer.of("8192"), "left", "left", "ctrl+u").text == "92"
    assert typed(LineBuffer.of("8192"), "left", "left", "ctrl+k").text == "81"
    buffer = typed(LineBuffer.of("q, v, gate"), "end", "ctrl+w")
    assert (buffer.text, buffer.cursor) == ("q, v, ", 6)
    assert typed(LineBuffer.of(""), "end", "backspace", "left", "delete").text == ""


def test_cursor_stays_inside_the_text_and_unknown_keys_are_not_consumed() -> None:
    buffer = typed(LineBuffer.of("12"), "right", "right", "right")
    assert buffer.cursor == 2
    buffer = typed(buffer, "left", "left", "left", "left")
    assert buffer.cursor == 0
    assert not buffer.press("f5") and not buffer.press("enter", "\r")
    assert not buffer.press("escape", "\x1b") and buffer.text == "12"
    assert buffer.press("e", "e") and buffer.text == "e12"  # 'e' types (1e6), not edits


def test_choice_edit_filters_moves_and_names_the_column_when_nothing_matches() -> None:
    from planner.core.errors import ValidationError
    from planner.tui.state.cell_edit import CellEdit

    edit = CellEdit.of_choices(1, "gpu", "s · gpu", "", str,
                               ["a100-80gb", "h100-pcie", "h100-sxm", "h200"], "h200")
    assert (edit.shown[edit.index], edit.value()) == ("h200", "h200")
    assert edit.press("right") == "changed" and edit.value() == "a100-80gb"  # wraps
    assert edit.press("left") == "changed" and edit.value() == "h200"
    assert edit.press("1", "1") == "changed" and edit.shown == ["a100-80gb", "h100-pcie",
                                                               "h100-sxm"]
    assert edit.press("backspace") == "changed" and len(edit.shown) == 4
    assert edit.press("H", "H") == "changed" and edit.shown == ["h100-pcie", "h100-sxm",
                                                               "h200"]  # any case
    assert edit.press("1", "1") == "changed" and edit.shown == ["h100-pcie", "h100-sxm"]
    assert edit.press("tab") == "changed" and edit.value() == "h100-sxm"
    assert edit.press("x", "x") == "changed" and edit.shown == []
    try:
        edit.value()
    except ValidationError as exc:
        assert str(exc).startswith("gpu: must be one of a100-80gb, h100-pcie")
    else:
        raise AssertionError("no match must be refused")
    assert edit.press("f5") == "ignored"
    assert (edit.press("enter"), edit.press("escape")) == ("accept", "cancel")


def test_choice_row_keeps_the_highlight_in_view() -> None:
    from planner.tui.widgets.formula_bar import choice_row

    names = [f"model-{i:02d}" for i in range(40)]
    row = choice_row(names, 30, 60)
    assert " model-30 " in row.plain and row.plain.startswith("…") and row.plain.endswith("…")
    assert row.cell_len <= 60
    highlighted = [row.plain[s.start:s.end] for s in row.spans if "reverse" in str(s.style)]
    assert highlighted == [" model-30 "]
    assert choice_row(["yes", "no"], 1, 60).plain == "   yes   no  "
    assert choice_row([], 0, 60).plain == "no choice matches what is typed"


def test_paste_inserts_the_first_line_as_typed() -> None:
    from planner.tui.state.cell_edit import CellEdit

    edit = CellEdit(1, "batch", "s · batch", "", int, LineBuffer.of("6"))
    assert edit.paste("128\nignored") == "changed" and edit.value() == 128  # replaced
    assert edit.paste("  \n") == "ignored" and edit.value() == 128
    assert edit.paste("0") == "changed" and edit.value() == 1280  # then at the cursor
