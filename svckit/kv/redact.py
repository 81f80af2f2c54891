"""Which words of a Redis command are secrets, and which replies: the one rule that the sandbox's
monitor stream (as Redis's own MONITOR does) and the KV explorer's console (its history, its output
and its static view, all of which a saved notebook keeps) follow.

Pure functions over a command's words, ``str`` or ``bytes`` alike, so the service side (the monitor,
which may import client modules) and the widgets (which may not import the sandbox) share them. Each
caller says how a secret is shown: the monitor writes ``(redacted)`` as Redis does, the console
``***`` and at most the last four characters (:func:`svckit.errors.mask`).

What is secret: AUTH's arguments; HELLO's AUTH pair; ACL SETUSER's password rules (``>pw``, ``<pw``,
``#hash``, ``!hash``); ACL RESTTOKEN's password; MIGRATE's AUTH password and AUTH2 pair; CONFIG SET of
a password setting; and the replies that are credentials: ACL RESTTOKEN's token, ACL GENPASS's
password, the password hashes in ACL GETUSER's and ACL LIST's replies.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

Word = TypeVar("Word", str, bytes)

#: CONFIG SET parameters whose value is a password
SECRET_CONFIG = frozenset({"requirepass", "masterauth", "masteruser", "tls-key-file-pass", "tls-client-key-file-pass"})
#: the first characters of ACL SETUSER's password rules
PASSWORD_RULES = (">", "<", "#", "!")


def _text(word: str | bytes) -> str:
    return word.decode("utf-8", "replace") if isinstance(word, (bytes, bytearray)) else str(word)


def _name(word: str | bytes) -> str:
    """A command or option name, upper-cased; a long word (a value: the monitor sees 10 MiB ones) is
    no name and is not decoded."""
    return _text(word).upper() if len(word) <= 32 else ""


def secret_arguments(argv: Sequence[str | bytes]) -> list[int]:
    """The positions in ``argv`` (a command and its arguments) that hold a secret."""
    name = _name(argv[0]) if argv else ""
    sub = _name(argv[1]) if len(argv) > 1 else ""
    if name == "AUTH":
        return list(range(1, len(argv)))
    if name == "ACL" and sub == "RESTTOKEN":
        return list(range(3, len(argv)))
    if name == "ACL" and sub == "SETUSER":
        return [i for i in range(3, len(argv)) if _text(argv[i][:1]) in PASSWORD_RULES]
    if name in ("HELLO", "MIGRATE"):
        found: list[int] = []
        for i, word in enumerate(argv):
            option = _name(word)
            if i not in found and (option == "AUTH" or (name == "MIGRATE" and option == "AUTH2")):
                width = 2 if (name == "HELLO" or option == "AUTH2") else 1
                found += [j for j in range(i + 1, i + 1 + width) if j < len(argv)]
        return found
    if name == "CONFIG" and sub == "SET":
        return [i + 1 for i in range(2, len(argv) - 1, 2) if _name(argv[i]).lower() in SECRET_CONFIG]
    return []


def redact(argv: Sequence[Word], hide: Callable[[Word], Word]) -> list[Word]:
    """``argv`` with each secret argument replaced by ``hide(argument)``."""
    secret = set(secret_arguments(argv))
    return [hide(a) if i in secret else a for i, a in enumerate(argv)]


def redact_reply(argv: Sequence[str | bytes], reply: Any, hide: Callable[[str], str]) -> Any:
    """``reply`` to ``argv`` with the credentials in it replaced by ``hide(credential)`` (decoded or
    not: a client with ``decode=False`` replies in bytes): a minted token or password whole, password
    hashes one by one. What is hidden comes back as text."""
    words = [_name(a) for a in argv[:2]]
    if len(words) < 2 or words[0] != "ACL":
        return reply
    if words[1] in ("RESTTOKEN", "GENPASS") and isinstance(reply, (str, bytes)):
        return hide(_text(reply))
    if words[1] == "GETUSER" and isinstance(reply, list):
        return [[hide(_text(h)) for h in v] if i % 2 and _text(reply[i - 1]) == "passwords" and isinstance(v, list)
                else v for i, v in enumerate(reply)]
    if words[1] == "LIST" and isinstance(reply, list):
        return [" ".join(hide(w) if w[:1] in PASSWORD_RULES else w for w in _text(line).split(" "))
                if isinstance(line, (str, bytes)) else line for line in reply]
    return reply


__all__ = ["PASSWORD_RULES", "SECRET_CONFIG", "redact", "redact_reply", "secret_arguments"]
