#!/usr/bin/env python3
"""Drives Firefox through Marionette with nothing but the standard library: installs an add-on
temporarily and opens each URL in a tab of its own, then leaves Firefox to it.

usage: marionette.py PROFILE EXTENSION_DIR URL...
PROFILE is the profile Firefox was started with, `--marionette` and `marionette.port` 0: the port
it listens on is read from PROFILE/MarionetteActivePort.
"""
import json
import os
import socket
import sys
import time


def read_message(stream):
    length = b""
    while not length.endswith(b":"):
        byte = stream.recv(1)
        if not byte:
            raise SystemExit("marionette: connection closed")
        length += byte
    size = int(length[:-1])
    data = b""
    while len(data) < size:
        chunk = stream.recv(size - len(data))
        if not chunk:
            raise SystemExit("marionette: connection closed")
        data += chunk
    return json.loads(data)


class Marionette:
    def __init__(self, port):
        self.socket = socket.create_connection(("127.0.0.1", port), timeout=60)
        self.next_id = 1
        hello = read_message(self.socket)
        if hello.get("marionetteProtocol") != 3:
            raise SystemExit(f"marionette: unexpected greeting {hello}")

    def call(self, command, parameters):
        message_id = self.next_id
        self.next_id += 1
        data = json.dumps([0, message_id, command, parameters]).encode()
        self.socket.sendall(str(len(data)).encode() + b":" + data)
        while True:
            reply = read_message(self.socket)
            if reply[0] == 1 and reply[1] == message_id:
                if reply[2]:
                    raise SystemExit(f"marionette: {command} failed: {reply[2]}")
                return reply[3]


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__.strip().splitlines()[3])
    profile, extension, urls = sys.argv[1], sys.argv[2], sys.argv[3:]
    port_file = os.path.join(profile, "MarionetteActivePort")
    deadline = time.monotonic() + 60
    while not os.path.exists(port_file) or not open(port_file).read().strip():
        if time.monotonic() > deadline:
            raise SystemExit(f"marionette: no {port_file} after 60 s")
        time.sleep(0.05)
    while True:
        try:
            marionette = Marionette(int(open(port_file).read().strip()))
            break
        except ConnectionRefusedError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)
    marionette.call("WebDriver:NewSession", {"capabilities": {"alwaysMatch": {"pageLoadStrategy": "none"}}})
    installed = marionette.call("Addon:Install", {"path": extension, "temporary": True})
    print(f"installed {installed.get('value')}", flush=True)
    for index, url in enumerate(urls):
        if index > 0:
            tab = marionette.call("WebDriver:NewWindow", {"type": "tab"})
            marionette.call("WebDriver:SwitchToWindow", {"handle": tab["handle"]})
        # A script, not WebDriver:Navigate, which waits for a page load a download never finishes.
        marionette.call("WebDriver:ExecuteScript", {"script": "window.location.href = arguments[0];", "args": [url]})
        print(f"opened {url}", flush=True)


if __name__ == "__main__":
    main()
