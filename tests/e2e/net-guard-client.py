# The Python side of tests/e2e/net-guard.test.ts, run inside `rune sandbox` by Debian's python3.
# Every way a socket can be pointed somewhere, once at the allowed (name, port) and once at a
# destination that must stay unreachable. Prints one JSON object per check:
#   {"check": NAME, "reply": text the server sent or null, "error": errno name or null, ...}
import ctypes
import errno
import json
import os
import select
import socket
import sys
import threading

ALLOWED_HOST, ALLOWED_PORT, OTHER_PORT, OTHER_ADDR, STALLED_PORT = (
    sys.argv[1],
    int(sys.argv[2]),
    int(sys.argv[3]),
    sys.argv[4],
    int(sys.argv[5]),
)
ALLOWED = (ALLOWED_HOST, ALLOWED_PORT)
OTHER_PORT_SAME_NAME = (ALLOWED_HOST, OTHER_PORT)
OTHER_ADDRESS = (OTHER_ADDR, ALLOWED_PORT)
libc = ctypes.CDLL(None, use_errno=True)


def out(check, **fields):
    print(json.dumps({"check": check, **fields}), flush=True)


def errname(e):
    return errno.errorcode.get(e.errno, str(e.errno)) if isinstance(e, OSError) else type(e).__name__


def run(check, fn):
    try:
        reply = fn()
        out(check, reply=reply.decode() if isinstance(reply, bytes) else reply, error=None)
    except Exception as e:  # noqa: BLE001 - every failure is a result here
        out(check, reply=None, error=errname(e))


def resolve(addr):
    return socket.getaddrinfo(addr[0], addr[1], socket.AF_INET, socket.SOCK_STREAM)[0][4]


def exchange(s, data=b"ping"):
    s.settimeout(5)
    s.sendall(data)
    return s.recv(200)


def blocking_connect(addr):
    s = socket.socket()
    r = libc.connect(s.fileno(), *sockaddr(addr))
    if r != 0:
        raise OSError(ctypes.get_errno(), "connect")
    return exchange(s)


def sockaddr(addr):
    host, port = resolve(addr)
    raw = socket.inet_aton(host)
    buf = (ctypes.c_ubyte * 16)(*([2, 0] + list(port.to_bytes(2, "big")) + list(raw) + [0] * 8))
    return buf, 16


def nonblocking_connect(addr):
    s = socket.socket()
    s.setblocking(False)
    rc = s.connect_ex(resolve(addr))
    if rc not in (0, errno.EINPROGRESS):
        raise OSError(rc, "connect")
    select.select([], [s], [], 5)
    err = s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
    if err:
        raise OSError(err, "SO_ERROR")
    peer = s.getpeername()
    s.setblocking(True)
    return {"connect": errno.errorcode.get(rc, rc), "peer": list(peer), "data": exchange(s).decode()}


def fastopen(addr, blocking=True):
    s = socket.socket()
    if not blocking:
        s.setblocking(False)
        try:
            n = s.sendto(b"tfo", socket.MSG_FASTOPEN, resolve(addr))
        except BlockingIOError as e:
            n = errno.errorcode[e.errno]
        select.select([], [s], [], 5)
        err = s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
        if err:
            raise OSError(err, "SO_ERROR")
        s.setblocking(True)
        return {"sendto": n, "data": exchange(s).decode()}
    n = s.sendto(b"tfo", socket.MSG_FASTOPEN, resolve(addr))
    s.settimeout(5)
    return {"sendto": n, "data": s.recv(200).decode()}


def fastopen_sendmsg(addr):
    s = socket.socket()
    n = s.sendmsg([b"tfo", b"msg"], [], socket.MSG_FASTOPEN, resolve(addr))
    s.settimeout(5)
    return {"sendmsg": n, "data": s.recv(200).decode()}


def fastopen_sendmmsg(addr):
    # sendmmsg with MSG_FASTOPEN: a batch that would connect with its first message; refused.
    class IOVec(ctypes.Structure):
        _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]

    class MsgHdr(ctypes.Structure):
        _fields_ = [("name", ctypes.c_void_p), ("namelen", ctypes.c_uint32), ("iov", ctypes.POINTER(IOVec)),
                    ("iovlen", ctypes.c_size_t), ("control", ctypes.c_void_p), ("controllen", ctypes.c_size_t),
                    ("flags", ctypes.c_int)]

    class MMsgHdr(ctypes.Structure):
        _fields_ = [("hdr", MsgHdr), ("len", ctypes.c_uint)]

    s = socket.socket()
    buf = ctypes.create_string_buffer(b"tfo")
    iov = IOVec(ctypes.cast(buf, ctypes.c_void_p), 3)
    name, namelen = sockaddr(addr)
    msg = MMsgHdr(MsgHdr(ctypes.cast(name, ctypes.c_void_p), namelen, ctypes.pointer(iov), 1, None, 0, 0), 0)
    r = libc.sendmmsg(s.fileno(), ctypes.byref(msg), 1, socket.MSG_FASTOPEN)
    if r < 0:
        raise OSError(ctypes.get_errno(), "sendmmsg")
    s.settimeout(5)
    return s.recv(200)


def sendto_elsewhere_on_connected(addr):
    # TCP ignores the address of a connected socket: the bytes go to the allowed peer only.
    s = socket.create_connection(resolve(ALLOWED), timeout=5)
    s.sendto(b"redirected", resolve(addr))
    return s.recv(200)


def disconnect(s):
    unspec = (ctypes.c_ubyte * 16)()
    if libc.connect(s.fileno(), unspec, 16) != 0:
        raise OSError(ctypes.get_errno(), "AF_UNSPEC")


def disconnect_then(action):
    s = socket.create_connection(resolve(ALLOWED), timeout=5)
    first = exchange(s)
    disconnect(s)
    return {"first": first.decode(), "then": action(s)}


def then_connect(addr):
    def go(s):
        try:
            s.connect(resolve(addr))
            return {"data": exchange(s).decode()}
        except OSError as e:
            return {"error": errname(e)}

    return go


def then_fastopen(addr):
    def go(s):
        try:
            s.sendto(b"tfo", socket.MSG_FASTOPEN, resolve(addr))
            s.settimeout(5)
            return {"data": s.recv(200).decode()}
        except OSError as e:
            return {"error": errname(e)}

    return go


def hold_listener(check, s):
    # Whatever listens here must be inside the sandbox, never on the host: the test connects to
    # the port from the host while this waits, and must never read the token.
    s.listen(4)
    port = s.getsockname()[1]

    def serve():
        while True:
            try:
                c, _ = s.accept()
                c.sendall(b"SANDBOX-LISTENER-TOKEN")
                c.close()
            except OSError:
                return

    threading.Thread(target=serve, daemon=True).start()
    out(check + " (listening)", listening=port)
    sys.stdin.readline()  # the test writes a line once it has tried
    return {"listening": port}


def then_listen(s):
    try:
        return hold_listener("disconnect then listen", s)
    except OSError as e:
        return {"error": errname(e)}


def connect_again():
    # The kernel's answers to connect() repeated on a non-blocking socket: EALREADY while it is
    # connecting, 0 once it is established, EISCONN after that.
    stalled = socket.socket()
    stalled.setblocking(False)
    first = stalled.connect_ex(("127.0.0.1", STALLED_PORT))
    again = stalled.connect_ex(("127.0.0.1", STALLED_PORT))
    s = socket.socket()
    s.setblocking(False)
    a = s.connect_ex(resolve(ALLOWED))
    select.select([], [s], [], 5)
    b = s.connect_ex(resolve(ALLOWED))
    c = s.connect_ex(resolve(ALLOWED))
    name = lambda rc: errno.errorcode.get(rc, rc)
    return {"connecting": [name(first), name(again)], "established": [name(a), name(b), name(c)]}


def half_close():
    # shutdown(SHUT_WR) on a handed-over socket: the peer sees the end, the answer still arrives.
    s = socket.create_connection(resolve(ALLOWED), timeout=5)
    s.sendall(b"half")
    s.shutdown(socket.SHUT_WR)
    return s.recv(200)


def kernel_errors():
    # Bad arguments get the kernel's own errors, not the guard's.
    def err(fd, addr, length):
        r = libc.connect(fd, addr, length)
        return "ok" if r == 0 else errno.errorcode.get(ctypes.get_errno())
    name, namelen = sockaddr(ALLOWED)
    r, w = os.pipe()
    s = socket.socket()
    return {
        "bad fd": err(999, name, namelen),
        "not a socket": err(r, name, namelen),
        "address too long": err(s.fileno(), name, 200),
        "no address": err(s.fileno(), None, 16),
    }


def shutdown_while_connecting():
    # A connect that stays in SYN_SENT (an allowed server whose accept queue is full drops the
    # SYN), then shutdown(): the kernel's own shutdown would disconnect the guard's host socket;
    # it must never become a host listener.
    s = socket.socket()
    s.setblocking(False)
    rc = s.connect_ex(("127.0.0.1", STALLED_PORT))
    state = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 8)[0]
    result = {"connect": errno.errorcode.get(rc, rc), "state": {2: "SYN_SENT", 1: "ESTABLISHED"}.get(state, state)}
    try:
        s.shutdown(socket.SHUT_RDWR)
        result["shutdown"] = 0
    except OSError as e:
        result["shutdown"] = errname(e)
    try:
        result.update(hold_listener("shutdown while connecting then listen", s))
    except OSError as e:
        result["listen"] = errname(e)
    return result


def from_thread():
    box = {}

    def go():
        try:
            box["reply"] = blocking_connect(ALLOWED).decode()
        except OSError as e:
            box["error"] = errname(e)

    t = threading.Thread(target=go)
    t.start()
    t.join()
    return box


def python_connect_returns_zero():
    # The bug this guards against: connect() returned the fd number and Python raised "errno 0".
    s = socket.socket()
    s.settimeout(5)
    s.connect(resolve(ALLOWED))
    return exchange(s)


def options_kept():
    # Options set before connect() are carried over to the socket the guard installs.
    s = socket.socket()
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE, 77)
    s.settimeout(5)
    s.connect(resolve(ALLOWED))
    return {
        "nodelay": s.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY),
        "keepalive": s.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE),
        "keepidle": s.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE),
        "data": exchange(s).decode(),
    }


def udp_sends():
    # UDP never leaves the sandbox's empty namespace, not even to the allowed name and port: the
    # guard serves TCP only. The host's UDP servers count what arrives (the test expects nothing).
    results = {}

    def attempt(name, fn):
        try:
            fn()
            results[name] = "sent"
        except OSError as e:
            results[name] = errname(e)

    def plain(addr):
        socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"udp", resolve(addr))

    def connected_then_elsewhere(addr):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.connect(resolve(ALLOWED))
        s.send(b"udp-connected")
        s.sendmsg([b"udp-msg-name"], [], 0, resolve(addr))

    def mapped(addr):
        host, port = resolve(addr)
        socket.socket(socket.AF_INET6, socket.SOCK_DGRAM).sendto(b"udp6", ("::ffff:" + host, port))

    attempt("sendto allowed", lambda: plain(ALLOWED))
    attempt("sendto other port", lambda: plain(OTHER_PORT_SAME_NAME))
    attempt("connected, sendmsg with another msg_name", lambda: connected_then_elsewhere(OTHER_PORT_SAME_NAME))
    attempt("connected, sendmsg with the allowed msg_name", lambda: connected_then_elsewhere(ALLOWED))
    attempt("IPv4-mapped sendto allowed", lambda: mapped(ALLOWED))
    return results


def passed_over_scm_rights():
    # A socket the guard handed over, passed to another process of the sandbox over SCM_RIGHTS: the
    # guard supervises every process there, so the receiver cannot re-point it either.
    s = socket.create_connection(resolve(ALLOWED), timeout=5)
    first = exchange(s).decode()
    parent, child = socket.socketpair()
    pid = os.fork()
    if pid == 0:
        parent.close()
        _, fds, _, _ = socket.recv_fds(child, 16, 1)
        got = socket.socket(fileno=fds[0])
        got.settimeout(5)
        out = {}
        try:
            disconnect(got)
            out["disconnect"] = 0
        except OSError as e:
            out["disconnect"] = errname(e)
        out["then connect other port"] = then_connect(OTHER_PORT_SAME_NAME)(got)
        out["then fastopen other address"] = then_fastopen(OTHER_ADDRESS)(socket.socket(fileno=os.dup(got.fileno())))
        out["then connect allowed"] = then_connect(ALLOWED)(got)
        child.sendall(json.dumps(out).encode())
        os._exit(0)
    child.close()
    socket.send_fds(parent, [b"x"], [s.fileno()])
    s.close()
    parent.settimeout(20)
    data = b""
    while True:
        part = parent.recv(4096)
        if not part:
            break
        data += part
    os.waitpid(pid, 0)
    return {"first": first, "receiver": json.loads(data.decode())}


run("connect blocking allowed", lambda: blocking_connect(ALLOWED))
run("connect keeps socket options", options_kept)
run("connect python allowed", python_connect_returns_zero)
run("connect nonblocking allowed", lambda: nonblocking_connect(ALLOWED))
run("connect from a thread allowed", from_thread)
run("connect again", connect_again)
run("half close", half_close)
run("kernel errors", kernel_errors)
run("connect blocking other port", lambda: blocking_connect(OTHER_PORT_SAME_NAME))
run("connect nonblocking other port", lambda: nonblocking_connect(OTHER_PORT_SAME_NAME))
run("connect blocking other address", lambda: blocking_connect(OTHER_ADDRESS))
run("connect nonblocking other address", lambda: nonblocking_connect(OTHER_ADDRESS))
run("fastopen blocking allowed", lambda: fastopen(ALLOWED))
run("fastopen nonblocking allowed", lambda: fastopen(ALLOWED, blocking=False))
run("fastopen sendmsg allowed", lambda: fastopen_sendmsg(ALLOWED))
run("fastopen blocking other port", lambda: fastopen(OTHER_PORT_SAME_NAME))
run("fastopen nonblocking other port", lambda: fastopen(OTHER_PORT_SAME_NAME, blocking=False))
run("fastopen sendmsg other address", lambda: fastopen_sendmsg(OTHER_ADDRESS))
run("fastopen sendmmsg other address", lambda: fastopen_sendmmsg(OTHER_ADDRESS))
run("fastopen sendmmsg allowed", lambda: fastopen_sendmmsg(ALLOWED))
run("sendto other port on a connected socket", lambda: sendto_elsewhere_on_connected(OTHER_PORT_SAME_NAME))
run("disconnect then connect other port", lambda: disconnect_then(then_connect(OTHER_PORT_SAME_NAME)))
run("disconnect then fastopen other port", lambda: disconnect_then(then_fastopen(OTHER_PORT_SAME_NAME)))
run("disconnect then fastopen other address", lambda: disconnect_then(then_fastopen(OTHER_ADDRESS)))
run("disconnect then reuse allowed", lambda: disconnect_then(then_connect(ALLOWED)))
run("disconnect then listen", lambda: disconnect_then(then_listen))
run("shutdown while connecting then listen", shutdown_while_connecting)
run("udp", udp_sends)
run("passed over SCM_RIGHTS", passed_over_scm_rights)
