"""Client ID metadata documents served over HTTPS on 127.0.0.1, with a certificate made here."""

from __future__ import annotations

import datetime
import ipaddress
import json
import ssl
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


def certificate() -> tuple[bytes, bytes]:
    """A self-signed certificate for the address 127.0.0.1 and its key, both PEM."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "mcpfusion test documents")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    key_pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    return cert.public_bytes(serialization.Encoding.PEM), key_pem


@dataclass
class Documents:
    """The running document server: what it serves by path, and the paths asked for."""

    base: str
    trust: ssl.SSLContext
    """Trusts this server's certificate (for the facade's ``metadata_documents_tls``)."""
    served: dict[str, tuple[int, dict[str, str], bytes]] = field(default_factory=dict)
    asked: list[str] = field(default_factory=list)

    def url(self, path: str) -> str:
        """The URL of ``path`` (which starts with ``/``)."""
        return f"{self.base}{path}"

    def put(self, path: str, document: Any, status: int = 200, **headers: str) -> str:
        """Serves ``document`` (JSON, or bytes as they are) at ``path``; its URL."""
        body = document if isinstance(document, bytes) else json.dumps(document).encode()
        self.served[path] = (status, {"Content-Type": "application/json", **headers}, body)
        return self.url(path)


@contextmanager
def document_server() -> Iterator[Documents]:
    """An HTTPS server of documents on a free port of 127.0.0.1, stopped at the end."""
    cert, key = certificate()
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "cert.pem").write_bytes(cert)
        (Path(folder) / "key.pem").write_bytes(key)
        serving = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        serving.load_cert_chain(Path(folder) / "cert.pem", Path(folder) / "key.pem")
    trust = ssl.create_default_context(cadata=cert.decode())
    documents = Documents("", trust)

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            documents.asked.append(self.path)
            status, headers, body = documents.served.get(self.path, (404, {}, b""))
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_: Any) -> None:
            """Quiet: the tests read ``asked`` instead."""

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.socket = serving.wrap_socket(server.socket, server_side=True)
    documents.base = f"https://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1})
    thread.start()
    try:
        yield documents
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def metadata(url: str, redirect: str, **changes: Any) -> dict[str, Any]:
    """A client's metadata document at ``url`` for ``redirect``, as MCP clients publish."""
    return {
        "client_id": url,
        "client_name": "Document client",
        "redirect_uris": [redirect],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
        **changes,
    }
