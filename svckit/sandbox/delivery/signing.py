"""The signature on every delivery, which the SDKs' ``Receiver.verify`` checks (qstash's
``receiver.py``; @upstash/qstash's ``Receiver`` on jose).

``Upstash-Signature`` is a JWT signed HS256 with the current signing key (its UTF-8 bytes as they
are): ``iss`` "Upstash", ``sub`` the URL delivered to, ``iat`` = ``nbf`` = now, ``exp`` five minutes
later, a ``jti``, and ``body``: the base64url SHA-256 of the body delivered. No ``aud``: PyJWT refuses
a token with an audience it was not told to expect. Receivers try the current key, then the next, so
a rotation (the next key becomes current, a new next key is made) keeps every receiver that knows both.
A key is ``sig_`` and 28 random characters: 32 bytes, the least PyJWT takes for HS256 without a warning.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
import string
import time

import jwt

LIFETIME = 300
_ALPHABET = string.ascii_letters + string.digits


def new_signing_key() -> str:
    return "sig_" + "".join(secrets.choice(_ALPHABET) for _ in range(28))


def body_hash(body: bytes) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(body).digest()).decode().rstrip("=")


def signature(key: str, url: str, body: bytes, now: float | None = None) -> str:
    """The ``Upstash-Signature`` of a delivery of ``body`` to ``url``."""
    issued = int(time.time() if now is None else now)
    claims = {"iss": "Upstash", "sub": url, "iat": issued, "nbf": issued, "exp": issued + LIFETIME,
              "jti": "jwt_" + secrets.token_hex(12), "body": body_hash(body)}
    return jwt.encode(claims, key, algorithm="HS256")
