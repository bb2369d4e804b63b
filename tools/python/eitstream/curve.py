"""ZeroMQ CURVE for the Python client (docs/security.md): reads the certificates `eitstream keygen`
writes (ZeroMQ's z85 certificate format: NAME holds the public key, NAME_secret both keys) and
sets a socket up as a CURVE client of an `eitstream run --curve-secret … --curve-allow …`."""
import os
import stat

import zmq
from zmq.utils import z85


def read_certificate(path, need_secret=False):
    """{"public": bytes, "secret": bytes or None} from a certificate file; raises ValueError
    naming the file and the field when a key is missing or malformed, or when a secret file is
    readable by other users."""
    keys = {"public": None, "secret": None}
    with open(path, encoding="ascii") as f:
        for line in f:
            t = line.strip()
            for name, field in (("public-key", "public"), ("secret-key", "secret")):
                if t.startswith(name):
                    rest = t[len(name):].lstrip()
                    if rest.startswith("="):
                        keys[field] = rest[1:].strip().strip('"').strip("'").encode("ascii")
    for field in ("public",) + (("secret",) if need_secret else ()):
        key = keys[field]
        if key is None or len(key) != 40:
            raise ValueError(f"{path}: field {field}-key is {'missing' if key is None else key!r}; "
                             "expected 40 z85 characters (eitstream keygen writes it)")
        z85.decode(key)
    if need_secret and os.stat(path).st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise ValueError(f"{path}: other users can read the secret key; expected mode 0600")
    return keys


def apply_client(socket, server_key_file, secret_file):
    """Makes `socket` a CURVE client: the server's public certificate and this client's secret
    certificate (its public key must be on the server's --curve-allow list). Before connect()."""
    if not zmq.has("curve"):
        raise RuntimeError("this libzmq has no CURVE (libsodium); expected zmq.has('curve')")
    server = read_certificate(server_key_file)
    me = read_certificate(secret_file, need_secret=True)
    socket.curve_serverkey = server["public"]
    socket.curve_publickey = me["public"]
    socket.curve_secretkey = me["secret"]
