"""The formula bar's line editor: spreadsheet-style replace-on-type, readline keys."""

from __future__ import annotations

from planner.tui.editline import LineBuffer


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
