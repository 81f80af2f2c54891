"""Credential checks shared by the sandbox's areas (Basic for devapi, Bearer for queue and vector).

A check takes the ``Authorization`` header (or None) and returns None when it is accepted, else the
reason it is not, which the area puts in its own 401 body. Secrets are compared in constant time.
"""

from __future__ import annotations

import base64
import binascii
import hmac
from collections.abc import Callable

Check = Callable[[str | None], str | None]


def same_secret(given: str, expected: str) -> bool:
    """Constant-time comparison (no early exit that would leak how much of a secret matched)."""
    return hmac.compare_digest(given.encode(), expected.encode())


def basic_check(email: str, key: str) -> Check:
    def check(header: str | None) -> str | None:
        if not header:
            return "missing Authorization header (HTTP Basic: e-mail and API key)"
        scheme, _, value = header.partition(" ")
        if scheme.lower() != "basic" or not value.strip():
            return "malformed Authorization header: expected 'Basic <base64 of email:api_key>'"
        try:
            user, sep, password = base64.b64decode(value.strip(), validate=True).decode().partition(":")
        except (binascii.Error, UnicodeDecodeError):
            return "malformed Authorization header: the Basic credentials are not valid base64"
        if not sep:
            return "malformed Authorization header: the Basic credentials lack ':'"
        ok_user = same_secret(user, email)
        ok_key = same_secret(password, key)
        if not (ok_user and ok_key):
            return "invalid credentials"
        return None

    return check


def bearer_check(current_token: Callable[[], str], name: str, invalid_hint: str = "") -> Check:
    """``current_token`` is called on every request, so a rotated token stops working at once."""

    def check(header: str | None) -> str | None:
        if not header:
            return f"missing Authorization header (Bearer <{name}>)"
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return f"malformed Authorization header: expected 'Bearer <{name}>'"
        if not same_secret(token.strip(), current_token()):
            return f"invalid token{invalid_hint}"
        return None

    return check
