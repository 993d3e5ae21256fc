"""A slow network link in user space, for kernels without the netem queueing discipline.

Usage (as root): python3 slow_link.py HOST_NS HOST_IF SWITCH_NS SWITCH_IF CONTROL_FILE

Creates a TAP interface HOST_IF in network namespace HOST_NS and one, SWITCH_IF, in SWITCH_NS, and
copies Ethernet frames between them. Each direction is a link of RATE bits/s followed by a one-way
DELAY: a frame waits until the link is free, occupies it for len*8/RATE seconds and is delivered
DELAY later (frames stay in order). CONTROL_FILE holds "DELAY_MS RATE_MBIT" (0 = no limit); it is
read at start and again on SIGUSR1, so one relay serves every setting of a test. Prints "ready" once
both interfaces exist. Stops on SIGTERM.
"""
import collections
import ctypes
import fcntl
import os
import select
import signal
import struct
import sys
import time

CLONE_NEWNET = 0x40000000
TUNSETIFF = 0x400454CA
IFF_TAP, IFF_NO_PI = 0x0002, 0x1000


def open_tap(libc, netns, name):
    """A TAP device created in `netns` (the device lives in the namespace the tun file was opened in)."""
    with open(f"/var/run/netns/{netns}") as ns:
        if libc.setns(ns.fileno(), CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), f"setns({netns})")
    fd = os.open("/dev/net/tun", os.O_RDWR)
    fcntl.ioctl(fd, TUNSETIFF, struct.pack("16sH", name.encode(), IFF_TAP | IFF_NO_PI))
    os.set_blocking(fd, False)
    return fd


class Direction:
    """Frames from one TAP to the other through a rate limit and a delay."""

    def __init__(self, src, dst):
        self.src, self.dst = src, dst
        self.queue = collections.deque()  # (due time, frame), due times non-decreasing
        self.busy_until = 0.0

    def receive(self, now, delay, rate):
        while True:
            try:
                frame = os.read(self.src, 65536)
            except BlockingIOError:
                return
            start = max(now, self.busy_until)
            self.busy_until = start + (len(frame) * 8 / rate if rate > 0 else 0.0)
            self.queue.append((self.busy_until + delay, frame))

    def deliver(self, now):
        while self.queue and self.queue[0][0] <= now:
            try:
                os.write(self.dst, self.queue.popleft()[1])
            except OSError:
                pass  # the other side is down: the frame is lost, as on a wire

    def next_due(self):
        return self.queue[0][0] if self.queue else None


def main():
    host_ns, host_if, switch_ns, switch_if, control = sys.argv[1:6]
    libc = ctypes.CDLL("libc.so.6", use_errno=True)
    host_fd = open_tap(libc, host_ns, host_if)
    switch_fd = open_tap(libc, switch_ns, switch_if)
    setting = {"delay": 0.0, "rate": 0.0}

    def reload(*_):
        delay_ms, rate_mbit = (float(v) for v in open(control).read().split())
        setting["delay"], setting["rate"] = delay_ms / 1000.0, rate_mbit * 1e6

    reload()
    signal.signal(signal.SIGUSR1, reload)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    up = Direction(host_fd, switch_fd)
    down = Direction(switch_fd, host_fd)
    print("ready", flush=True)
    while True:
        now = time.monotonic()
        dues = [d for d in (up.next_due(), down.next_due()) if d is not None]
        timeout = max(0.0, min(dues) - now) if dues else 1.0
        try:
            readable, _, _ = select.select([host_fd, switch_fd], [], [], timeout)
        except InterruptedError:
            continue
        now = time.monotonic()
        if host_fd in readable:
            up.receive(now, setting["delay"], setting["rate"])
        if switch_fd in readable:
            down.receive(now, setting["delay"], setting["rate"])
        up.deliver(now)
        down.deliver(now)


if __name__ == "__main__":
    main()
