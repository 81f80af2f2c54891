"""The sandbox over https (``svckit sandbox --tls``): a local CA and a server certificate, made at
every start with trustme.

Only the CA certificate is kept, in the data directory (``ca.pem``, what SVC_CA_FILE names), for the
clients to trust. The server's private key is in memory: on disk only while OpenSSL loads it, in a
0600 file inside the 0700 data directory, removed at once. The CA's key is never written. A new CA
at every start: a client made before a restart must read ``ca.pem`` again.
"""

from __future__ import annotations

import ssl
from pathlib import Path

from svckit._files import write_private

#: the names every certificate is for; the host the sandbox binds is added (its URLs name it)
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")
CA_FILE = "ca.pem"


def server_context(data_dir: Path, host: str) -> tuple[ssl.SSLContext, Path]:
    """A server SSLContext presenting a new certificate for the loopback names and ``host``, and the
    path of the CA certificate that signed it, written into ``data_dir``."""
    import trustme  # (and cryptography: loaded by a tls sandbox only)

    names = dict.fromkeys([*LOOPBACK_NAMES, host] if host else LOOPBACK_NAMES)
    ca = trustme.CA(organization_name="svckit sandbox")
    cert = ca.issue_cert(*names, organization_name="svckit sandbox")
    ca_file = data_dir / CA_FILE
    write_private(ca_file, ca.cert_pem.bytes().decode("ascii"))
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    # ssl reads a key from a file only (trustme's tempfile: 0600, deleted when the block ends)
    with cert.private_key_and_cert_chain_pem.tempfile(dir=str(data_dir)) as path:
        context.load_cert_chain(path)
    return context, ca_file
