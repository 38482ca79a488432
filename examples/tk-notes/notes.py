"""tk-notes: a Tkinter notes window whose text an agent can read and edit through
jfgui-agentd, with undo, and agent access off until the user ticks the box.

    pip install jfgui_host-*.whl       # the wheel `pip wheel bindings/python` builds
    python3 examples/tk-notes/notes.py [--agent-enable] [--text TEXT]

The app registers as "Tk Notes" (endpoint `tk-notes`). Agents see `notes.get`,
`notes.replace`, `notes.insert`, `notes.undo` and `notes.clear`; `jfgui-agent inspect tk-notes`
shows the text and the revision. Every change to the text, typed or made by an agent, moves the
revision, so an agent's write based on what it read earlier is refused if the user typed
in between. `notes.clear` asks the user first, in a dialog ("<agent> wants to: Clear the
notes": Allow once, Always allow <agent>, Deny); the call waits meanwhile, and nothing is
cleared on a no or if the agent gives up.

"Let agents start Tk Notes" writes the app's launch file: while it is ticked, an agent that
calls Tk Notes when it is not running has the daemon start it (this script, with the same
Python), and a window started that way has agent access on and says so.
"""

from __future__ import annotations

import argparse
import tkinter as tk
from typing import Any, Optional

from jfgui_host import (
    Answer,
    Confirmation,
    Host,
    HostError,
    JfguiError,
    action,
    agents_may_start,
    let_agents_start,
    started_by_agent,
    stop_letting_agents_start,
)
from jfgui_host.loops import TkPump

NAME = "Tk Notes"
TEXT = {"type": "string", "maxLength": 100000}


class Notes(Host):
    """The Text widget's content is the state; the revision counts its changes."""

    def __init__(self, text: tk.Text) -> None:
        super().__init__(NAME)
        self.text = text
        self._revision = 1
        self._seen = self.content()
        self._dialogs: dict[str, tk.Toplevel] = {}

    def content(self) -> str:
        return self.text.get("1.0", "end-1c")

    def revision(self) -> int:
        # Whoever changed the text (the user typing, an undo, an agent), the revision read
        # after the change is one higher; reading it again without a change leaves it.
        now = self.content()
        if now != self._seen:
            self._seen = now
            self._revision += 1
        return self._revision

    def inspect(self, input: Any) -> Any:
        return {"text": self.content(), "length": len(self.content())}

    def _edit(self, change: Any) -> dict[str, Any]:
        # One undo step per agent edit, separate from the user's typing around it.
        self.text.edit_separator()
        change()
        self.text.edit_separator()
        return {"length": len(self.content())}

    @action("notes.get", "Read the notes' text.", kind="read",
            output={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]})
    def get(self, input: Any) -> Any:
        return {"text": self.content()}

    @action("notes.replace", "Replace the whole text of the notes (undoable).", kind="write", undo=True,
            input={"type": "object", "properties": {"text": TEXT}, "required": ["text"],
                   "additionalProperties": False})
    def replace(self, input: Any) -> Any:
        def change() -> None:
            self.text.delete("1.0", "end")
            self.text.insert("1.0", input["text"])

        return self._edit(change)

    @action("notes.insert", "Insert text at a character position (default: the end; undoable).",
            kind="write", undo=True,
            input={"type": "object",
                   "properties": {"text": TEXT, "position": {"type": "integer", "minimum": 0}},
                   "required": ["text"], "additionalProperties": False})
    def insert(self, input: Any) -> Any:
        position = input.get("position", len(self.content()))
        if position > len(self.content()):
            raise HostError("out_of_range", f"position {position} is past the end of the text")
        return self._edit(lambda: self.text.insert(f"1.0 + {position} chars", input["text"]))

    @action("notes.clear", "Delete the whole text (undoable). The user is asked first: the call answers with a "
            "task that waits for their answer; follow it with tasks/get, do not retry.",
            kind="write", undo=True, title="Clear the notes", confirm=True)
    def clear(self, input: Any) -> Any:
        return self._edit(lambda: self.text.delete("1.0", "end"))

    def confirm(self, confirmation: Confirmation) -> Optional[Answer]:
        """A dialog of its own (not modal: the notes and the agent link keep working), answered
        by a button; the answer goes back through ``answer``."""
        dialog = tk.Toplevel(self.text)
        dialog.title("Notes: an agent asks")
        who = confirmation.agent_name
        tk.Label(dialog, text=f"{who} wants to: {confirmation.summary}", font=("TkDefaultFont", 13, "bold"),
                 padx=12, pady=8).pack(anchor="w")
        tk.Label(dialog, text=f"Asked by {confirmation.agent_label}", padx=12).pack(anchor="w")
        buttons = tk.Frame(dialog, padx=12, pady=10)
        buttons.pack(anchor="w")

        def reply(answer: Answer) -> None:
            self._close(confirmation.ticket)
            self.answer(confirmation.ticket, answer)

        tk.Button(buttons, text="Allow once", command=lambda: reply(Answer.ALLOW)).pack(side="left")
        if confirmation.may_always:
            tk.Button(buttons, text=f"Always allow {who}", command=lambda: reply(Answer.ALLOW_ALWAYS)).pack(side="left")
        deny = tk.Button(buttons, text="Deny", command=lambda: reply(Answer.DENY))
        deny.pack(side="left")
        # The safe choice has the focus (Space presses it, Shift+Tab goes to the others);
        # closing the window is a no too.
        deny.focus_set()
        dialog.protocol("WM_DELETE_WINDOW", lambda: reply(Answer.DENY))
        self._dialogs[confirmation.ticket] = dialog
        return None

    def withdraw_confirmation(self, ticket: str) -> None:
        self._close(ticket)

    def _close(self, ticket: str) -> None:
        dialog = self._dialogs.pop(ticket, None)
        if dialog is not None:
            dialog.destroy()

    @action("notes.undo", "Undo the last change, the user's or an agent's.", kind="write")
    def undo(self, input: Any) -> Any:
        try:
            self.text.edit_undo()
        except tk.TclError:
            raise HostError("nothing_to_undo", "there is nothing to undo") from None
        return {"length": len(self.content())}


def main() -> None:
    parser = argparse.ArgumentParser(description="A Tkinter notes window agents can read and edit.")
    parser.add_argument("--agent-enable", action="store_true", help="start with agent access on")
    parser.add_argument("--text", default="", help="initial text")
    args = parser.parse_args()

    root = tk.Tk()
    root.title("Notes")
    text = tk.Text(root, undo=True, width=60, height=16, font=("TkFixedFont", 14))
    text.insert("1.0", args.text)
    text.edit_reset()
    notes = Notes(text)
    # Started by the daemon from the launch file: the user's "Let agents start" is their yes.
    activated = started_by_agent()
    allowed = tk.BooleanVar(value=args.agent_enable or activated)
    startable = tk.BooleanVar(value=agents_may_start(NAME))
    status = tk.Label(root, anchor="w")

    def apply_choice() -> None:
        notes.set_enabled(allowed.get())
        why = " Started by an agent." if activated and allowed.get() else ""
        status.config(text="Agents can read and edit these notes (endpoint tk-notes)." + why
                      if allowed.get() else "Agent access is off.")

    def apply_startable() -> None:
        try:
            if startable.get():
                let_agents_start(NAME)
            else:
                stop_letting_agents_start(NAME)
        except JfguiError as e:
            startable.set(not startable.get())
            status.config(text=f"Cannot change whether agents may start Tk Notes: {e}")

    tk.Checkbutton(root, text="Let agents read and edit these notes", variable=allowed,
                   command=apply_choice).pack(anchor="w")
    tk.Checkbutton(root, text="Let agents start Tk Notes", variable=startable,
                   command=apply_startable).pack(anchor="w")
    text.pack(fill="both", expand=True)
    status.pack(fill="x")
    apply_choice()
    notes.connect()
    TkPump(root, notes).pump()
    text.focus_set()
    root.protocol("WM_DELETE_WINDOW", root.destroy)
    try:
        root.mainloop()
    finally:
        notes.close()


if __name__ == "__main__":
    main()
