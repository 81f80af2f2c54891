"""Every error svckit raises, in one tree.

::

    SvcError
    ├── ConfigError                 a SVC_* variable or client argument is missing
    ├── InvalidArgument (ValueError) an argument was refused before any request was sent
    ├── TransportError              the request could not be completed (after retries)
    │   ├── RequestTimeout
    │   └── UntrustedCertificate    https: the server's certificate failed verification (not retried)
    ├── ProtocolError               the server's reply does not follow the protocol
    ├── StreamClosed                an event stream ended or failed
    ├── StreamRefused               (internal) the server refused to open a stream; clients raise
    │                               their APIError for it, built from ``response``
    ├── InvalidRequest (ValueError)  the local vector index refused a request (the sandbox's 400)
    ├── EmbeddingModelMissing (RuntimeError)  the local index has no embedding model (the sandbox's 422)
    ├── DiskError (OSError)         a file system refused a write: full, read-only (the sandbox's 507)
    ├── UnsafePath (PermissionError) a private file or directory another user owns or may write, or a symlink
    ├── DataDirectoryInUse (RuntimeError)  another live process (a sandbox, its redis-server) holds the data directory
    └── APIError                    the server answered with an error status
        ├── BadRequest              400
        │   └── CommandError        400 / {error} element: a key-value command failed
        ├── AuthError               401: token or credentials missing or invalid
        ├── NotFound                404
        ├── MethodNotAllowed        405
        ├── PayloadTooLarge         413: the request body is over the interface's size cap
        ├── UnprocessableEntity     422
        │   └── EmbeddingModelRequired   422 from a vector text query
        ├── TooManyRequests         429: a limit on open streams (or requests) was reached
        └── ServerError             5xx
    TransactionDiscarded (APIError) a /multi-exec transaction was discarded as a whole

Every message says what failed and, where it can, how to fix it. No message ever contains a token
or password: `mask()` shows at most the last four characters.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import SecretStr

if TYPE_CHECKING:
    import httpx


def mask(secret: str | SecretStr | None) -> str:
    """Show a secret as ``***`` plus at most its last four characters (fewer for short secrets)."""
    if isinstance(secret, SecretStr):
        secret = secret.get_secret_value()
    if not secret:
        return "***"
    tail = secret[-4:] if len(secret) >= 12 else ""
    return f"***{tail}"


class SvcError(Exception):
    """Base of every svckit error."""


class ConfigError(SvcError):
    """A required setting (SVC_* variable or client argument) is missing or malformed."""


class InvalidArgument(SvcError, ValueError):
    """An argument was refused before any request was sent; ``argument`` names it."""

    def __init__(self, argument: str, message: str) -> None:
        self.argument = argument
        super().__init__(f"{argument}: {message}")


class TransportError(SvcError):
    """The request could not be completed: connection refused or reset, body truncated, ..."""


class RequestTimeout(TransportError):
    """The server did not answer within the client's timeout."""


class UntrustedCertificate(TransportError):
    """The server's TLS certificate failed verification (no trusted CA signed it, or it names
    another host). Never retried: the next handshake meets the same certificate."""


class ProtocolError(SvcError):
    """The server's reply does not follow the protocol (malformed JSON, envelope or RESP2)."""


class StreamClosed(SvcError):
    """An event stream (monitor, subscribe) ended unexpectedly or could not be resumed."""


class StreamRefused(SvcError):
    """Raised when opening a stream, when the server refused it with an HTTP error status.

    Clients catch it and turn ``response`` into their own APIError (they know the error body format).
    """

    def __init__(self, response: httpx.Response) -> None:
        self.response = response
        super().__init__(f"HTTP {response.status_code}")


class InvalidRequest(SvcError, ValueError):
    """A request to the local vector index that does not follow the request table; the sandbox
    answers 400 with this message."""

    status = 400


class EmbeddingModelMissing(SvcError, RuntimeError):
    """The local index was created without an embedding model, so it cannot embed text (HTTP 422)."""

    def __init__(self) -> None:
        super().__init__("Embedding data for this index is not allowed. The index must be created with "
                         "an embedding model to embed data")


class DiskError(SvcError, OSError):
    """The file system of the sandbox's data directory or of a local index refused a write: it is
    full, read-only, over a quota or failing (:mod:`svckit._disk`). ``path`` names the file; the write
    was undone, so nothing of it is half-written. The sandbox answers 507 with this message."""

    status = 507

    def __init__(self, message: str, path: str) -> None:
        self.path = path
        super().__init__(message)


class UnsafePath(SvcError, PermissionError):
    """A file or directory that holds secrets is not the user's own alone: another user owns it, group or
    others may write it, or it is a symbolic link where a file was expected (:mod:`svckit._files`).
    Refused rather than used or tightened: another user may have planted or changed what is in it.
    ``path`` names it; the message says why and how to fix it."""

    def __init__(self, message: str, path: str) -> None:
        self.path = path
        super().__init__(message)


class DataDirectoryInUse(SvcError, RuntimeError):
    """Another live process holds the sandbox's data directory: a sandbox serving it, or a
    ``redis-server`` a sandbox started there and that outlived it (:mod:`svckit.sandbox.lock`)."""


class APIError(SvcError):
    """The server answered with an error status. ``status`` and ``body`` hold what it said."""

    def __init__(self, message: str, *, status: int | None = None, body: Any = None) -> None:
        self.status = status
        self.body = body
        super().__init__(message)


class BadRequest(APIError):
    """HTTP 400: syntax error, invalid or unsupported command, bad header value."""


class CommandError(BadRequest):
    """A key-value command failed; the message is the protocol error text (e.g. WRONGTYPE ...)."""


class AuthError(APIError):
    """HTTP 401: the token or credentials are missing or invalid."""


class NotFound(APIError):
    """HTTP 404: no such resource."""


class MethodNotAllowed(APIError):
    """HTTP 405: the interface does not accept this HTTP method."""


class PayloadTooLarge(APIError):
    """HTTP 413: the request body is over the interface's size cap (a message over the queue
    account's max_message_size, a pipeline over the maximum request size)."""


class TooManyRequests(APIError):
    """HTTP 429: a limit on what one token may hold open (event streams) or send was reached."""


class UnprocessableEntity(APIError):
    """HTTP 422: the request is well formed but cannot be processed."""


class EmbeddingModelRequired(UnprocessableEntity):
    """HTTP 422 from a vector text query: the index was created without an embedding model."""


class ServerError(APIError):
    """HTTP 5xx: the server failed."""


class TransactionDiscarded(APIError):
    """A /multi-exec transaction was discarded as a whole; no command of it ran."""


_BY_STATUS: dict[int, type[APIError]] = {
    400: BadRequest,
    401: AuthError,
    404: NotFound,
    405: MethodNotAllowed,
    413: PayloadTooLarge,
    422: UnprocessableEntity,
    429: TooManyRequests,
}

_HINTS: dict[type[APIError], str] = {
    AuthError: "check the token or credentials (SVC_* variables); a rotated or reset one stops working at once",
    MethodNotAllowed: "use HEAD, GET, POST or PUT",
    PayloadTooLarge: "send less per request: split the batch, pipeline or message",
    TooManyRequests: "close an open event stream, or wait, before trying again",
}


def error_for_status(status: int, message: str, body: Any = None, *, what: str = "request") -> APIError:
    """Build the APIError subclass that matches an HTTP status."""
    cls = _BY_STATUS.get(status) or (ServerError if status >= 500 else APIError)
    text = f"{what} failed with HTTP {status}: {message}"
    hint = _HINTS.get(cls)
    if hint:
        text += f" ({hint})"
    return cls(text, status=status, body=body)
