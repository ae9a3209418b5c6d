"""A certificate authority made for one run, and the leaf certificates it signs for intercepted hosts.

Its key is written 0600 into a 0700 folder of its own and never leaves it; the folder goes when the run
ends unless the user asked to keep it.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
import ssl
from dataclasses import dataclass, field
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

CA_CERT = "ca.pem"
CA_KEY = "ca-key.pem"
_VALID = datetime.timedelta(days=2)
_LEAVES = 256
"""Leaf contexts kept, at most (one per intercepted host)."""


def _write_private(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as file:
        file.write(data)


def _name(common: str) -> x509.Name:
    return x509.Name(
        [x509.NameAttribute(NameOID.ORGANIZATION_NAME, "wiretap"), x509.NameAttribute(NameOID.COMMON_NAME, common)]
    )


def _san(host: str) -> x509.GeneralName:
    try:
        return x509.IPAddress(ipaddress.ip_address(host.strip("[]")))
    except ValueError:
        return x509.DNSName(host)


@dataclass
class RunCA:
    """The CA of one run, in ``folder`` (0700): ``ca.pem`` (public) and ``ca-key.pem`` (0600)."""

    folder: Path
    key: ec.EllipticCurvePrivateKey
    cert: x509.Certificate
    _leaves: dict[str, ssl.SSLContext] = field(default_factory=dict)

    @classmethod
    def create(cls, folder: Path) -> RunCA:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(folder, 0o700)
        key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.UTC)
        name = _name(f"wiretap run CA {os.urandom(4).hex()}")
        cert = (
            x509.CertificateBuilder()
            .subject_name(name)
            .issuer_name(name)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + _VALID)
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(
                x509.KeyUsage(
                    digital_signature=True,
                    content_commitment=False,
                    key_encipherment=False,
                    data_encipherment=False,
                    key_agreement=False,
                    key_cert_sign=True,
                    crl_sign=True,
                    encipher_only=False,
                    decipher_only=False,
                ),
                critical=True,
            )
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
            .sign(key, hashes.SHA256())
        )
        _write_private(
            folder / CA_KEY,
            key.private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
            ),
        )
        (folder / CA_CERT).write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        return cls(folder, key, cert)

    @property
    def cert_path(self) -> Path:
        return self.folder / CA_CERT

    def pem(self) -> bytes:
        return self.cert.public_bytes(serialization.Encoding.PEM)

    def leaf(self, host: str) -> tuple[bytes, bytes]:
        """A certificate (PEM, with the CA's after it) and its key (PEM) for ``host``."""
        key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.UTC)
        cert = (
            x509.CertificateBuilder()
            .subject_name(_name(host[:64]))
            .issuer_name(self.cert.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + _VALID)
            .add_extension(x509.SubjectAlternativeName([_san(host)]), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(self.key.public_key()), critical=False)
            .sign(self.key, hashes.SHA256())
        )
        chain = cert.public_bytes(serialization.Encoding.PEM) + self.pem()
        pem_key = key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
        return chain, pem_key

    def server_context(self, host: str) -> ssl.SSLContext:
        """A server-side TLS context presenting a leaf for ``host`` (HTTP/1.1 by ALPN), made once per host."""
        host = host.lower()
        known = self._leaves.get(host)
        if known is not None:
            return known
        chain, key = self.leaf(host)
        # ssl loads a key only from a file: written 0600 beside the CA's, read, and removed at once.
        path = self.folder / f"leaf-{os.urandom(6).hex()}.pem"
        _write_private(path, key + chain)
        try:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.minimum_version = ssl.TLSVersion.TLSv1_2
            context.load_cert_chain(path)
        finally:
            path.unlink()
        context.set_alpn_protocols(["http/1.1"])
        if len(self._leaves) >= _LEAVES:
            self._leaves.clear()
        self._leaves[host] = context
        return context
