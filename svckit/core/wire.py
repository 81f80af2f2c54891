"""Words of the wire protocol that the clients and the sandbox both write or read.

The vector enums and the queue's run states stay with their models (``svckit.vector.models``,
``svckit.queue.models``: pydantic only, so the sandbox imports them without a client).
"""

#: the payload that ends an event stream on an error: ``error,<the error text>`` (a subscription's
#: failure, or a monitor the server dropped because its reader fell behind); the sandbox writes it,
#: :func:`svckit.kv.protocol.parse_monitor` reads it
STREAM_ERROR = "error,"
