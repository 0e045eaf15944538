#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""cdp.py [--login TOKEN_FILE] URL SECONDS SCREENSHOT.png [JS_EXPRESSION]

--login: URL is dsnfsd's login page: its form is filled with the token of
TOKEN_FILE (through the DevTools protocol, never in a URL) and submitted,
as an operator would; the page then is the dashboard, with its session.

Loads URL in headless Chromium (Debian's `chromium`), talks to it over the
DevTools protocol (python3-websocket) for SECONDS, saves a screenshot and
prints one JSON object: {"errors": [console errors and uncaught
exceptions], "value": the JS expression's value at the end}.  Chromium
runs with a throw-away profile and no network beyond what the page asks
(all of it on loopback here); it is ended by its pid.
"""
import json
import base64
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

import websocket


def main():
    args = sys.argv[1:]
    token_file = None
    if args[:1] == ["--login"]:
        token_file, args = args[1], args[2:]
    url, seconds, shot = args[0], float(args[1]), args[2]
    expr = args[3] if len(args) > 3 else "null"
    profile = tempfile.mkdtemp(prefix="dsnfs-chromium.")
    proc = subprocess.Popen(
        ["chromium", "--headless", "--no-sandbox", "--disable-gpu",
         "--disable-quic", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync",
         "--disable-default-apps", "--window-size=1280,900",
         "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0",
         "--user-data-dir=" + profile, "about:blank"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        port_file = os.path.join(profile, "DevToolsActivePort")
        for _ in range(300):
            if os.path.exists(port_file) and open(port_file).read().strip():
                break
            time.sleep(0.1)
        port = open(port_file).read().split()[0]
        pages = json.load(urllib.request.urlopen(
            "http://127.0.0.1:%s/json/list" % port, timeout=10))
        page = [p for p in pages if p["type"] == "page"][0]
        ws = websocket.create_connection(page["webSocketDebuggerUrl"],
                                         timeout=1, suppress_origin=True)
        ids = iter(range(1, 1 << 30))
        errors = []
        results = {}

        def send(method, params=None):
            i = next(ids)
            ws.send(json.dumps({"id": i, "method": method,
                                "params": params or {}}))
            return i

        def pump(until):
            while time.time() < until:
                try:
                    m = json.loads(ws.recv())
                except websocket.WebSocketTimeoutException:
                    continue
                if "id" in m:
                    results[m["id"]] = m
                    continue
                meth, p = m.get("method"), m.get("params", {})
                if meth == "Runtime.exceptionThrown":
                    d = p["exceptionDetails"]
                    errors.append("exception: %s" % d.get("exception", {})
                                  .get("description", d.get("text")))
                elif meth == "Runtime.consoleAPICalled" and p["type"] in (
                        "error", "assert"):
                    errors.append("console.%s: %s" % (p["type"], " ".join(
                        str(a.get("value", a.get("description")))
                        for a in p["args"])))
                elif meth == "Log.entryAdded" and \
                        p["entry"]["level"] == "error":
                    errors.append("log: %s %s" % (p["entry"]["text"],
                                                  p["entry"].get("url", "")))

        def call(method, params=None, wait=15):
            i = send(method, params)
            end = time.time() + wait
            while i not in results and time.time() < end:
                pump(time.time() + 0.2)
            return results.get(i, {}).get("result", {})

        for m in ("Runtime.enable", "Log.enable", "Page.enable"):
            call(m)
        call("Page.navigate", {"url": url})
        if token_file:
            with open(token_file) as f:
                token = f.read().strip()
            # The login form is there once the page has loaded.
            for _ in range(50):
                pump(time.time() + 0.2)
                found = call("Runtime.evaluate", {
                    "expression": "!!document.getElementById('token')",
                    "returnByValue": True})
                if found.get("result", {}).get("value"):
                    break
            call("Runtime.evaluate", {"expression": (
                "document.getElementById('token').value = %s; "
                "document.getElementById('login').submit();"
                % json.dumps(token))})
        pump(time.time() + seconds)
        value = call("Runtime.evaluate", {"expression": expr,
                                          "returnByValue": True})
        png = call("Page.captureScreenshot", {"format": "png"})
        with open(shot, "wb") as f:
            f.write(base64.b64decode(png.get("data", "")))
        print(json.dumps({"errors": errors,
                          "value": value.get("result", {}).get("value")}))
        try:
            send("Browser.close")
        except Exception:
            pass
        ws.close()
    finally:
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        shutil.rmtree(profile, ignore_errors=True)


if __name__ == "__main__":
    main()
