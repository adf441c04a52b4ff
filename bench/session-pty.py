"""Drives an interactive terminal program in a pseudo-terminal for bench/session.mjs.

Starts the program on a 120x40 pty, answers the terminal queries a TUI may wait for (cursor
position, device attributes), waits for it to be ready, sends a prompt, then measures:
  echo:   while the answer streams, one keystroke at a time, the time until its character is
          written back (each a Greek letter no screen of either program holds otherwise);
  render: the time from Enter until the answer's last line is written.
Prints one JSON object. Usage: python3 session-pty.py '<json plan>'
"""
import fcntl, json, os, pty, select, struct, sys, termios, time

plan = json.loads(sys.argv[1])
pid, fd = pty.fork()
if pid == 0:
    os.chdir(plan["cwd"])
    os.execvpe(plan["argv"][0], plan["argv"], plan["env"])
fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
out = bytearray()


def pump(timeout):
    """Reads what the program wrote within `timeout` s; answers its terminal queries."""
    ready, _, _ = select.select([fd], [], [], timeout)
    if not ready:
        return False
    try:
        data = os.read(fd, 1 << 16)
    except OSError:
        return False
    out.extend(data)
    if b"\x1b[6n" in data:
        os.write(fd, b"\x1b[1;1R")
    if b"\x1b[c" in data or b"\x1b[0c" in data:
        os.write(fd, b"\x1b[?62;22c")
    return True


def wait_for(marker, timeout, start=0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if out.find(marker, start) != -1:
            return True
        pump(0.005)
    return out.find(marker, start) != -1


result = {"echo_ms": [], "render_ms": None, "ok": False}
try:
    if not wait_for(plan["ready"].encode(), 30):
        raise SystemExit(f"not ready: {bytes(out[-400:])!r}")
    deadline = time.monotonic() + 1.5
    while time.monotonic() < deadline:
        pump(0.01)
    first = plan["first"].encode()
    mark = len(out)
    # Typed a key at a time: a burst of keys reads as a paste to a TUI that guesses pastes (Codex).
    for ch in plan["prompt"]:
        os.write(fd, ch.encode())
        deadline = time.monotonic() + 0.03
        while time.monotonic() < deadline:
            pump(0.005)
    time.sleep(0.3)
    sent = time.monotonic()
    os.write(fd, b"\r")
    # A TUI still starting up (Codex's welcome) may take the first Enter for itself: send another.
    if not wait_for(first, 5, mark):
        sent = time.monotonic()
        os.write(fd, b"\r")
    if plan["mode"] == "echo":
        if not wait_for(first, 20, mark):
            raise SystemExit("the answer did not start")
        for letter in "αβγδεζηθικλμνξοπρστυφχψω"[: plan["keys"]]:
            code = letter.encode()
            at = len(out)
            t0 = time.monotonic()
            os.write(fd, code)
            if wait_for(code, 3, at):
                result["echo_ms"].append((time.monotonic() - t0) * 1000)
            deadline = time.monotonic() + plan["gap"] / 1000
            while time.monotonic() < deadline:
                pump(0.005)
        result["ok"] = len(result["echo_ms"]) > 0
    else:
        if wait_for(plan["last"].encode(), 60, mark):
            result["render_ms"] = (time.monotonic() - sent) * 1000
            result["ok"] = True
        else:
            result["tail"] = bytes(out[-600:]).decode("utf8", "replace")
finally:
    os.kill(pid, 9)
    os.waitpid(pid, 0)
print(json.dumps(result))
