"""The text and cursor of the formula bar's one-line editor, with no UI in it.

The grid keeps the keyboard focus while a cell is edited in the formula bar: moving focus to a
text field and back makes Textual re-render every visible cell of the grid (its render caches
are keyed on the focus state), which costs far more than the edit itself. So the sheet hands
each key to a :class:`LineBuffer`, and the bar only draws it. The keys follow readline and
Textual's ``Input``: arrows, Home/End (ctrl+a/ctrl+e), Backspace/Delete, ctrl+u and ctrl+k to
delete to the start or end, ctrl+w to delete a word. Like a spreadsheet cell, the value starts
out as a whole: the first character typed replaces it and the first deleting key clears it,
while a cursor key keeps it for editing.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class LineBuffer:
    """One line of text being edited, and where the cursor is (0 to ``len(text)``)."""

    text: str = ""
    cursor: int = 0
    fresh: bool = True
    """True until the user types or moves: the next character then replaces the whole text."""

    @classmethod
    def of(cls, text: str) -> LineBuffer:
        """A buffer holding ``text`` with the cursor at its end."""
        return cls(text, len(text))

    def press(self, key: str, character: str | None = None) -> bool:
        """Apply one key (Textual's key name and the character it types, if printable).

        Returns whether the key edited or moved anything it knows; Enter and Escape are the
        caller's."""
        if character is not None and len(character) == 1 and character.isprintable() \
                and key not in ("enter", "escape", "tab"):
            self.insert(character)
            return True
        action = _KEYS.get(key)
        if action is None:
            return False
        if self.fresh and action in _DELETING:
            self.text, self.cursor = "", 0
        else:
            action(self)
        self.fresh = False
        return True

    def insert(self, chars: str) -> None:
        """Type ``chars`` at the cursor (replacing everything while the buffer is fresh)."""
        if self.fresh:
            self.text, self.cursor, self.fresh = "", 0, False
        self.text = self.text[:self.cursor] + chars + self.text[self.cursor:]
        self.cursor += len(chars)

    def _left(self) -> None:
        self.cursor = max(0, self.cursor - 1)

    def _right(self) -> None:
        self.cursor = min(len(self.text), self.cursor + 1)

    def _home(self) -> None:
        self.cursor = 0

    def _end(self) -> None:
        self.cursor = len(self.text)

    def _backspace(self) -> None:
        if self.cursor:
            self.text = self.text[:self.cursor - 1] + self.text[self.cursor:]
            self.cursor -= 1

    def _delete(self) -> None:
        self.text = self.text[:self.cursor] + self.text[self.cursor + 1:]

    def _kill_left(self) -> None:
        self.text, self.cursor = self.text[self.cursor:], 0

    def _kill_right(self) -> None:
        self.text = self.text[:self.cursor]

    def _kill_word(self) -> None:
        start = len(self.text[:self.cursor].rstrip())
        while start and not self.text[start - 1].isspace():
            start -= 1
        self.text, self.cursor = self.text[:start] + self.text[self.cursor:], start


_KEYS = {
    "left": LineBuffer._left, "right": LineBuffer._right,
    "home": LineBuffer._home, "ctrl+a": LineBuffer._home,
    "end": LineBuffer._end, "ctrl+e": LineBuffer._end,
    "backspace": LineBuffer._backspace, "ctrl+h": LineBuffer._backspace,
    "delete": LineBuffer._delete, "ctrl+d": LineBuffer._delete,
    "ctrl+u": LineBuffer._kill_left, "ctrl+k": LineBuffer._kill_right,
    "ctrl+w": LineBuffer._kill_word,
}
_DELETING = {LineBuffer._backspace, LineBuffer._delete, LineBuffer._kill_left,
             LineBuffer._kill_right, LineBuffer._kill_word}
