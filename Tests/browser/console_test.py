#!/usr/bin/env python3
"""Browser test of Spotter's web console (/console/) in headless Chromium.

Usage: python3 Tests/browser/console_test.py /path/to/spotter   (or SPOTTER_BIN=/path/to/spotter)
       SPOTTER_WEB_ROOT=Sources/SpotterWeb/files  serves the console from the checkout instead of the built-in copy.

It starts its own server (free 127.0.0.1 port, temporary data directory, --development), creates an admin, a
coach and a client (linked), and drives the console in separate Chromium sessions: live chat with unread badges
and read receipts, a server restart that both pages must survive without duplicates, Arabic (RTL), phone width,
and the admin's live figures. Screenshots go to <repo>/.build/screenshots/. Prints `browser: N passed`; exits
non-zero on the first failure (and when Chromium, chromedriver or selenium are missing).
"""

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import traceback
import urllib.error
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SCREENSHOTS = REPO / ".build" / "screenshots"
WAIT = 15  # seconds: the longest single wait
TOTAL_BUDGET = 170  # seconds: the whole test
PASSWORD = "secret-pass-1"
ADMIN_PASSWORD = "admin-pass-1"


DRIVERS = []  # every browser started, for their logs on failure


class Failure(Exception):
    pass


def fail(message):
    raise Failure(message)


# MARK: - Prerequisites

def find_tool(env_name, candidates):
    value = os.environ.get(env_name)
    if value:
        return value if os.path.isfile(value) and os.access(value, os.X_OK) else None
    for candidate in candidates:
        path = shutil.which(candidate) if "/" not in candidate else candidate
        if path and os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None


def prerequisites():
    problems = []
    try:
        import selenium  # noqa: F401
    except ImportError:
        problems.append("the Python package selenium is missing (pip install selenium)")
    chromium = find_tool("CHROME_BIN", ["/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome"])
    if not chromium:
        problems.append("Chromium is missing (apt-get install chromium, or set CHROME_BIN)")
    driver = find_tool("CHROMEDRIVER", ["/usr/bin/chromedriver", "chromedriver"])
    if not driver:
        problems.append("chromedriver is missing (apt-get install chromium-driver, or set CHROMEDRIVER)")
    binary = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("SPOTTER_BIN")
    if not binary:
        problems.append("no spotter binary: pass its path as the first argument or set SPOTTER_BIN")
    elif not (os.path.isfile(binary) and os.access(binary, os.X_OK)):
        problems.append(f"the spotter binary {binary!r} is not an executable file")
    if problems:
        for problem in problems:
            print(f"browser: cannot run: {problem}", file=sys.stderr)
        sys.exit(2)
    return os.path.abspath(binary), chromium, driver


# MARK: - The server

def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, binary, data_dir, log_path):
        self.binary = binary
        self.data_dir = data_dir
        self.log_path = log_path
        self.port = free_port()
        self.process = None
        self.base = f"http://127.0.0.1:{self.port}"

    def create_admin(self, email, name):
        env = dict(os.environ, SPOTTER_ADMIN_PASSWORD=ADMIN_PASSWORD)
        result = subprocess.run(
            [self.binary, "admin", "create-admin", "--data-dir", self.data_dir, "--email", email,
             "--full-name", name, "--log-level", "warning"],
            env=env, capture_output=True, text=True, timeout=30)
        if result.returncode != 0:
            fail(f"spotter admin create-admin failed ({result.returncode}): {result.stderr.strip()}")

    def start(self):
        args = [self.binary, "serve", "--host", "127.0.0.1", "--port", str(self.port), "--data-dir", self.data_dir,
                "--development", "--log-level", "notice", "--shutdown-grace", "5"]
        if os.environ.get("SPOTTER_WEB_ROOT"):
            args += ["--web-root", os.environ["SPOTTER_WEB_ROOT"]]
        log = open(self.log_path, "ab")
        self.process = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        log.close()
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                fail(f"the server exited at start with {self.process.returncode}; log:\n{self.log_tail()}")
            try:
                with urllib.request.urlopen(f"{self.base}/healthz", timeout=2) as response:
                    if response.status == 200:
                        return
            except (urllib.error.URLError, ConnectionError, OSError):
                pass
            time.sleep(0.1)
        fail(f"the server did not answer /healthz within {WAIT} s; log:\n{self.log_tail()}")

    def stop(self, timeout=WAIT):
        """SIGTERM, then wait for the exit (SIGKILL only if it does not come)."""
        if not self.process or self.process.poll() is not None:
            return self.process.returncode if self.process else None
        self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=5)
            fail(f"the server did not exit within {timeout} s of SIGTERM")

    def log_tail(self, lines=40):
        try:
            return "\n".join(Path(self.log_path).read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def http(self, method, path, body=None, token=None, expect=(200, 201, 204)):
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(f"{self.base}{path}", data=data, method=method)
        if data is not None:
            request.add_header("Content-Type", "application/json")
        if token:
            request.add_header("Authorization", f"Bearer {token}")
        try:
            with urllib.request.urlopen(request, timeout=WAIT) as response:
                status, text = response.status, response.read().decode()
        except urllib.error.HTTPError as error:
            status, text = error.code, error.read().decode()
        if status not in expect:
            fail(f"{method} {path} answered {status}: {text}")
        return json.loads(text) if text else None


# MARK: - Browser helpers

class Checks:
    def __init__(self):
        self.passed = 0

    def ok(self, what):
        self.passed += 1
        print(f"  ok {self.passed:2d} {what}", flush=True)


def new_driver(chromium, chromedriver, width=1280, height=900):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                     f"--window-size={width},{height}", "--lang=en-US", "--no-first-run",
                     "--disable-background-timer-throttling", "--disable-renderer-backgrounding",
                     "--disable-backgrounding-occluded-windows"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(chromedriver), options=options)
    DRIVERS.append(driver)
    driver.set_page_load_timeout(WAIT)
    driver.set_script_timeout(WAIT)
    return driver


def wait_for(driver, condition, what, timeout=WAIT):
    """Polls `condition` (a re-rendered or not-yet-drawn element only means "not yet")."""
    from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException, TimeoutException
    from selenium.webdriver.support.ui import WebDriverWait

    try:
        return WebDriverWait(driver, timeout, poll_frequency=0.1,
                             ignored_exceptions=(NoSuchElementException, StaleElementReferenceException)
                             ).until(lambda d: condition(d))
    except TimeoutException:
        fail(f"timed out after {timeout} s waiting for {what}")


def click(driver, name):
    """Clicks the element with data-testid `name`, finding it again if the page redrew it meanwhile."""
    from selenium.common.exceptions import StaleElementReferenceException

    def attempt(d):
        try:
            testid(d, name).click()
            return True
        except StaleElementReferenceException:
            return False
    wait_for(driver, attempt, f"a click on {name}")


def testid(driver, name):
    from selenium.webdriver.common.by import By
    return driver.find_element(By.CSS_SELECTOR, f'[data-testid="{name}"]')


def testids(driver, name, root=None):
    from selenium.webdriver.common.by import By
    return (root or driver).find_elements(By.CSS_SELECTOR, f'[data-testid="{name}"]')


def js(driver, script, *args):
    return driver.execute_script(script, *args)


def js_async(driver, script, *args):
    return driver.execute_async_script(script, *args)


MESSAGES_JS = """
return [...document.querySelectorAll('[data-testid="message"]')].map((node) => ({
  seq: node.dataset.seq || null,
  state: node.dataset.state || null,
  sender: node.dataset.sender || null,
  text: node.querySelector('[data-testid="message-text"]')?.textContent ?? '',
}));
"""


def messages(driver):
    return js(driver, MESSAGES_JS)


def message_with(driver, text):
    found = [m for m in messages(driver) if m["text"] == text]
    return found[0] if len(found) == 1 else (None if not found else found)


def status_of(driver):
    return js(driver, """
      const node = document.querySelector('[data-testid="status"]');
      return node ? {state: node.dataset.state, live: Number(node.dataset.liveCount || 0)} : null;""")


def wait_live(driver, who, after=0):
    wait_for(driver, lambda d: (s := status_of(d)) and s["state"] == "live" and s["live"] > after,
             f"{who}'s connection status to be live" + (" again" if after else ""))


def sign_in(driver, base, email, password, who):
    driver.get(f"{base}/console/")
    wait_for(driver, lambda d: testid(d, "signin-email").is_displayed(), f"{who}'s sign-in form")
    testid(driver, "signin-email").send_keys(email)
    testid(driver, "signin-password").send_keys(password)
    click(driver, "signin-submit")
    wait_live(driver, who)


def send_message(driver, text):
    box = testid(driver, "composer-input")
    box.clear()
    box.send_keys(text)
    click(driver, "composer-send")


def assert_no_duplicates(driver, who):
    rows = messages(driver)
    seqs = [m["seq"] for m in rows if m["seq"]]
    dupes = sorted({s for s in seqs if seqs.count(s) > 1})
    if dupes:
        fail(f"{who}'s page shows these seqs more than once: {dupes}")
    stuck = [m["text"] for m in rows if m["state"] in ("sending", "failed")]
    if stuck:
        fail(f"{who}'s page still has unacknowledged messages: {stuck}")
    return len(seqs)


def wait_message(driver, text, who, state=None):
    def found(d):
        rows = [m for m in messages(d) if m["text"] == text]
        if len(rows) > 1:
            fail(f"{who}'s page shows {text!r} {len(rows)} times: {rows}")
        if not rows or not rows[0]["seq"]:
            return False
        return rows[0] if state is None or rows[0]["state"] == state else False
    return wait_for(driver, found, f"{text!r} on {who}'s page" + (f" with state {state!r}" if state else ""))


def browser_errors(driver):
    """Console errors that mean the page is broken (CSP violations, uncaught exceptions)."""
    try:
        entries = driver.get_log("browser")
    except Exception:  # noqa: BLE001 - a driver without logs
        return []
    bad = []
    for entry in entries:
        message = entry.get("message", "")
        if entry.get("level") == "SEVERE" and ("Content Security Policy" in message or "Uncaught" in message
                                               or "SyntaxError" in message or "TypeError" in message):
            bad.append(message)
    return bad


def screenshot(driver, name):
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / name
    if not driver.save_screenshot(str(path)):
        fail(f"could not save the screenshot {path}")


# MARK: - The test

def run(binary, chromium, chromedriver, checks, cleanup):
    work = tempfile.mkdtemp(prefix="spotter-browser-")
    cleanup.append(lambda: shutil.rmtree(work, ignore_errors=True))
    data_dir = os.path.join(work, "data")
    server = Server(binary, data_dir, os.path.join(work, "server.log"))
    cleanup.append(server.stop)
    cleanup.server = server

    server.create_admin("admin@example.com", "Ada Admin")
    server.start()
    base = server.base
    checks.ok(f"server started on {base} with an admin")

    # Accounts over HTTP: a coach, a second coach (for a change request), a client who picks the first one.
    def signup(role, name, email):
        return server.http("POST", "/v1/auth/signup", {"role": role, "full_name": name, "email": email,
                                                       "password": PASSWORD, "password_confirmation": PASSWORD})
    coach = signup("coach", "Carter Coach", "carter@example.com")
    coach2 = signup("coach", "Dana Coach", "dana@example.com")
    client = signup("client", "Amal Client", "amal@example.com")
    server.http("PUT", "/v1/me/onboarding", {
        "date_of_birth": "1995-06-15", "gender": "female", "height_cm": 165, "weight_kg": 70.5,
        "goal": "Lose 10kg", "experience_level": "beginner", "dietary_restrictions": ["Vegetarian"],
        "medical_conditions": []}, token=client["access_token"])
    link = server.http("POST", "/v1/me/coach", {"coach_id": coach["user"]["id"]}, token=client["access_token"])
    if not link or not link.get("thread_id"):
        fail(f"POST /v1/me/coach answered no thread_id: {link}")
    checks.ok("coach and client signed up, onboarded and linked")

    coach_page = new_driver(chromium, chromedriver)
    cleanup.append(coach_page.quit)
    client_page = new_driver(chromium, chromedriver)
    cleanup.append(client_page.quit)

    sign_in(coach_page, base, "carter@example.com", PASSWORD, "the coach")
    sign_in(client_page, base, "amal@example.com", PASSWORD, "the client")
    checks.ok("coach and client signed in through the console form; both live")

    # The client's page opens their one conversation by itself.
    wait_for(client_page, lambda d: testid(d, "composer-input").is_displayed(), "the client's conversation to open")
    wait_for(coach_page, lambda d: len(testids(d, "thread-item")) == 1, "the coach's conversation list")
    if coach_page.current_url.find("token") >= 0 or client_page.current_url.find("token") >= 0:
        fail("a token is in the page URL")
    stored = js(client_page, "return {local: JSON.stringify(localStorage), session: JSON.stringify(sessionStorage)}")
    if "access_token" in stored["local"] or "refresh_token" in stored["local"]:
        fail("tokens were stored in localStorage")
    if "access_token" not in stored["session"]:
        fail("tokens were not kept in sessionStorage")

    # 1. The client writes; the coach sees it live with the unread badge.
    first = "Hello coach, ready for today?"
    send_message(client_page, first)
    sent = wait_message(client_page, first, "the client")
    if sent["state"] not in ("sent", "read"):
        fail(f"the client's own message has state {sent['state']!r}")
    wait_for(coach_page, lambda d: testid(d, "thread-unread").is_displayed() and testid(d, "thread-unread").text == "1",
             "the unread badge 1 on the coach's conversation")
    wait_for(coach_page, lambda d: testid(d, "total-unread").text == "1", "the total unread badge 1 on the coach's page")
    wait_for(coach_page, lambda d: first in testid(d, "thread-preview").text, "the message as the coach's list preview")
    if client_page.find_elements("css selector", '[data-testid="message"][data-state="read"]'):
        fail("the client's message shows ✓✓ before the coach opened the thread")
    checks.ok("client's message reached the coach live: unread badge 1, preview, ✓ only")
    screenshot(coach_page, "console-coach-list.png")

    # 2. The coach opens the thread; the client's message turns ✓✓.
    click(coach_page, "thread-item")
    wait_message(coach_page, first, "the coach")
    wait_for(coach_page, lambda d: not testid(d, "thread-unread").is_displayed(), "the coach's badge to clear")
    wait_message(client_page, first, "the client", state="read")
    checks.ok("coach opened the thread: badge cleared, the client's message turned ✓✓ (read)")

    # Typing indicator: the coach types, the client sees "typing…".
    testid(coach_page, "composer-input").send_keys("W")
    wait_for(client_page, lambda d: testid(d, "typing").is_displayed(), "the typing indicator on the client's page")
    testid(coach_page, "composer-input").clear()
    checks.ok("typing indicator shown to the peer")

    # 3. The coach replies; the client sees it, and (the conversation being open) reads it.
    reply = "Great! Let's start with a warm-up."
    send_message(coach_page, reply)
    wait_message(client_page, reply, "the client")
    wait_message(coach_page, reply, "the coach", state="read")
    wait_for(client_page, lambda d: not testid(d, "typing").is_displayed(), "the typing indicator to hide")
    checks.ok("coach's reply reached the client and turned ✓✓ on the coach's page")
    screenshot(client_page, "console-chat-receipts.png")

    # 4. Restart the server (same port and data directory): both pages recover, nothing doubles.
    before = {"coach": status_of(coach_page)["live"], "client": status_of(client_page)["live"]}
    started = time.monotonic()
    code = server.stop()
    if code != 0:
        fail(f"the server exited with {code} on SIGTERM")
    for page, who in ((coach_page, "coach"), (client_page, "client")):
        wait_for(page, lambda d: status_of(d)["state"] != "live", f"the {who}'s status to leave live")
    server.start()
    wait_live(coach_page, "the coach", after=before["coach"])
    wait_live(client_page, "the client", after=before["client"])
    checks.ok(f"server restarted; both pages back to live in {time.monotonic() - started:.1f} s")

    after_client = "Back after the restart (client)"
    after_coach = "Back after the restart (coach)"
    send_message(client_page, after_client)
    send_message(coach_page, after_coach)
    for page, who in ((coach_page, "the coach"), (client_page, "the client")):
        wait_message(page, after_client, who)
        wait_message(page, after_coach, who)
    time.sleep(1.0)  # let any late duplicate (replay, resend) arrive before counting
    for page, who in ((coach_page, "coach"), (client_page, "client")):
        for text in (first, reply, after_client, after_coach):
            count = sum(1 for m in messages(page) if m["text"] == text)
            if count != 1:
                fail(f"{text!r} appears {count} times on the {who}'s page")
        shown = assert_no_duplicates(page, who)
        if shown != 4:
            fail(f"the {who}'s page shows {shown} stored messages, expected 4: {messages(page)}")
    seqs = sorted(int(m["seq"]) for m in messages(client_page))
    if seqs != [1, 2, 3, 4]:
        fail(f"the client's page shows seqs {seqs}, expected 1-4")
    checks.ok("after the restart a message each way arrived exactly once; no duplicate seq on either page")

    # 4b. A video session: the coach invites over a second socket of their own (4b' books through the console's form);
    # both pages show it in the Sessions panel and its system message in the thread.
    start = int(time.time()) + 2 * 86400
    start -= start % 900
    invite = js_async(coach_page, """
      const [threadId, start, done] = arguments;
      const stored = JSON.parse(sessionStorage.getItem('spotter.console.session'));
      const ws = new WebSocket(`ws://${location.host}/v1/ws?access_token=${encodeURIComponent(stored.access_token)}`);
      const timer = setTimeout(() => { ws.close(); done({error: 'no reply'}); }, 10000);
      ws.onmessage = (event) => {
        const frame = JSON.parse(event.data);
        if (frame.type === 'hello') ws.send(JSON.stringify({id: 'invite-1', type: 'session.invite', thread_id: threadId,
          start, duration_minutes: 30, purpose: 'Form check'}));
        if (frame.type === 'reply') { clearTimeout(timer); ws.close(); done(frame); }
      };
      ws.onerror = () => { clearTimeout(timer); done({error: 'socket error'}); };""", link["thread_id"], start)
    if not invite.get("ok"):
        fail(f"session.invite failed: {invite}")
    for page, who in ((coach_page, "coach"), (client_page, "client")):
        wait_for(page, lambda d: any(i.get_attribute("data-status") == "invited" for i in testids(d, "session-item")),
                 f"the invited session in the {who}'s Sessions panel")
        wait_for(page, lambda d: any(m["state"] == "system" and m["seq"] == "5" for m in messages(d)),
                 f"the session's system message (seq 5) on the {who}'s page")
        assert_no_duplicates(page, who)
    checks.ok("a session invite shows in both Sessions panels and as a system message in both threads")

    # 4b'. Availability (issue 30): the coach saves working hours in the editor, then books from the free times
    # offered for the open conversation's client; the client's page has neither panel.
    wait_for(coach_page, lambda d: testid(d, "availability-panel").is_displayed() and testid(d, "availability-mon"),
             "the coach's hours editor")
    if testid(client_page, "availability-panel").is_displayed() or testid(client_page, "booking-panel").is_displayed():
        fail("the client's page shows the coach's availability or booking panel")
    js(coach_page, """
      document.querySelector('[data-testid=availability-zone]').value = 'UTC';
      for (const day of ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun']) {
        const row = document.querySelector(`[data-testid=availability-${day}]`);
        row.querySelector('.day-on').checked = true;
        row.querySelector('.day-start').value = '10:00';
        row.querySelector('.day-end').value = '12:00';
      }""")
    click(coach_page, "availability-save")
    wait_for(coach_page, lambda d: testid(d, "availability-status").text == "Working hours saved.", "the hours to be saved")
    # Tomorrow in the browser's calendar; 30-minute sessions every 15 minutes inside 10:00–12:00 UTC.
    js(coach_page, """
      const t = new Date(Date.now() + 86400000);
      const pad = (n) => String(n).padStart(2, '0');
      document.querySelector('[data-testid=booking-date]').value = `${t.getFullYear()}-${pad(t.getMonth() + 1)}-${pad(t.getDate())}`;
      document.querySelector('[data-testid=booking-length]').value = '30';
      document.querySelector('[data-testid=booking-purpose]').value = 'Mobility review';""")
    click(coach_page, "booking-find")
    wait_for(coach_page, lambda d: len(testids(d, "booking-slot")) > 0, "the free times offered")
    offered = [b.text for b in testids(coach_page, "booking-slot")]
    allowed = {"10:00", "10:15", "10:30", "10:45", "11:00", "11:15", "11:30"}
    starts = [int(b.get_attribute("data-start")) for b in testids(coach_page, "booking-slot")]
    if not set(offered) <= allowed or any((s % 86400) < 36000 or (s % 86400) > 41400 for s in starts):
        fail(f"free times outside 10:00–11:30 UTC were offered: {offered}")
    checks.ok(f"the coach saved working hours and was offered {len(offered)} free times inside them")
    click(coach_page, "booking-slot")
    wait_for(coach_page, lambda d: testid(d, "booking-status").text == "Invitation sent.", "the invitation to be sent")
    for page, who in ((coach_page, "coach"), (client_page, "client")):
        wait_for(page, lambda d: any(i.get_attribute("data-status") == "invited" and "Mobility review" in i.text
                                     for i in testids(d, "session-item")), f"the booked session in the {who}'s Sessions panel")
    checks.ok("picking a free time invites the client: the session shows on both pages")
    screenshot(coach_page, "console-booking.png")
    # 4b''. The client's daily check-in (issue 30 item 3): sent over a second socket of the client's own (the console is
    # the coach's), it appears live in the coach's Daily check-ins panel — no reload, from the client_card event.
    if testids(client_page, "checkin-item") or testid(client_page, "checkins-panel").is_displayed():
        fail("the client's page shows the coach's Daily check-ins panel")
    wait_for(coach_page, lambda d: testid(d, "checkins-panel").is_displayed(), "the coach's Daily check-ins panel")
    if testids(coach_page, "checkin-item"):
        fail("the Daily check-ins panel lists a check-in before any was sent")
    checkin = js_async(client_page, """
      const [threadId, done] = arguments;
      const stored = JSON.parse(sessionStorage.getItem('spotter.console.session'));
      const ws = new WebSocket(`ws://${location.host}/v1/ws?access_token=${encodeURIComponent(stored.access_token)}`);
      const timer = setTimeout(() => { ws.close(); done({error: 'no reply'}); }, 10000);
      ws.onmessage = (event) => {
        const frame = JSON.parse(event.data);
        if (frame.type === 'hello') ws.send(JSON.stringify({id: 'daily-1', type: 'daily_check_in.submit', thread_id: threadId,
          mood: 4, soreness: 2, stress: 3, sick: true, notes: 'Head cold, resting today'}));
        if (frame.type === 'reply') { clearTimeout(timer); ws.close(); done(frame); }
      };
      ws.onerror = () => { clearTimeout(timer); done({error: 'socket error'}); };""", link["thread_id"])
    if not checkin.get("ok") or checkin["result"]["daily_check_in"]["overall_score"] != 33:
        fail(f"daily_check_in.submit failed: {checkin}")
    wait_for(coach_page, lambda d: any(i.get_attribute("data-client-id") == client["user"]["id"]
                                       and i.get_attribute("data-score") == "33" for i in testids(d, "checkin-item")),
             "the client's check-in (score 33) in the coach's Daily check-ins panel")
    item = testids(coach_page, "checkin-item")[0]
    if "Amal Client" not in item.text or "Head cold" not in item.text or "Sick" not in item.text:
        fail(f"the check-in card reads {item.text!r}")
    checks.ok("the client's daily check-in appeared live on the coach's dashboard panel (score, sick, notes)")
    screenshot(coach_page, "console-coach-checkins.png")

    # 4c. Browser notifications (Web Push): the toggle asks on a click, registers the service worker over the console
    # and asks the server for its VAPID key; without one (this server has none) it says so and stays off. Headless
    # Chromium has no push service, so a server with a key gets as far as the subscription (refused here).
    coach_page.execute_cdp_cmd("Browser.grantPermissions", {"origin": base, "permissions": ["notifications"]})
    wait_for(coach_page, lambda d: testid(d, "push-toggle").is_displayed(), "the notifications toggle")
    toggle = testid(coach_page, "push-toggle")
    if toggle.get_attribute("aria-pressed") != "false" or toggle.text != "Turn on notifications":
        fail(f"the toggle starts as {toggle.get_attribute('aria-pressed')!r} {toggle.text!r}")
    if js(coach_page, "return navigator.serviceWorker.controller") is not None:
        fail("a service worker was registered before the click")
    try:
        has_key = bool(server.http("GET", "/v1/push/vapid-public-key", expect=(200,)).get("key"))
    except Failure:
        has_key = False
    click(coach_page, "push-toggle")
    expected = ("pushEnabled", "pushFailed") if has_key else ("pushUnavailable",)
    wait_for(coach_page, lambda d: testid(d, "push-toggle").get_attribute("data-message") in expected,
             f"the toggle to report {expected}")
    worker = js_async(coach_page, """
      const done = arguments[arguments.length - 1];
      navigator.serviceWorker.ready.then((r) => done({scope: r.scope, script: r.active && r.active.scriptURL}));""")
    if worker.get("scope") != f"{base}/console/" or worker.get("script") != f"{base}/console/push-worker.js":
        fail(f"the service worker is not active over the console: {worker}")
    state = testid(coach_page, "push-toggle").get_attribute("data-message")
    if state != "pushEnabled" and testid(coach_page, "push-toggle").get_attribute("aria-pressed") != "false":
        fail("the toggle shows on though the browser was not registered")
    checks.ok(f"notifications toggle: permission asked on the click, service worker active at /console/, {state}")

    # A click on a notification opens /console/#thread=<id>: the conversation opens, the fragment goes.
    coach_page.get("about:blank")  # a new page load (the tab keeps its sessionStorage: still signed in)
    coach_page.get(f"{base}/console/#thread={link['thread_id']}")
    wait_live(coach_page, "the coach after a notification click")
    wait_for(coach_page, lambda d: testid(d, "composer-input").is_displayed(), "the thread opened from the URL")
    if js(coach_page, "return location.hash") != "":
        fail("the thread's id stayed in the URL")
    checks.ok("a notification's URL (/console/#thread=…) opens that conversation and leaves the URL clean")

    # Turning off removes this browser's device. (No push service here to subscribe: the page registers a
    # subscription of its own making, with a real P-256 key, as pushManager would have.)
    device = js_async(coach_page, """
      const done = arguments[arguments.length - 1];
      (async () => {
        const pair = await crypto.subtle.generateKey({name: 'ECDH', namedCurve: 'P-256'}, true, ['deriveBits']);
        const raw = new Uint8Array(await crypto.subtle.exportKey('raw', pair.publicKey));
        const b64 = (bytes) => btoa(String.fromCharCode(...bytes)).replace(/[+]/g, '-').replace(/[/]/g, '_').replace(/=+$/, '');
        const stored = JSON.parse(sessionStorage.getItem('spotter.console.session'));
        const response = await fetch('/v1/me/devices', {method: 'POST', headers: {'Content-Type': 'application/json',
          Authorization: `Bearer ${stored.access_token}`}, body: JSON.stringify({platform: 'webpush', subscription: {
          endpoint: 'http://127.0.0.1:9/push/console-test', keys: {p256dh: b64(raw), auth: b64(crypto.getRandomValues(new Uint8Array(16)))}}})});
        const device = await response.json();
        sessionStorage.setItem('spotter.console.pushDevice', device.id);
        done({status: response.status, id: device.id, token: stored.access_token});
      })().catch((error) => done({error: String(error)}));""")
    if device.get("status") != 201:
        fail(f"registering a test subscription failed: {device}")
    coach_page.refresh()
    wait_live(coach_page, "the coach after a reload")
    wait_for(coach_page, lambda d: testid(d, "push-toggle").get_attribute("aria-pressed") == "true"
             and testid(d, "push-toggle").text == "Notifications on", "the toggle on for this browser's device")
    if [d["id"] for d in server.http("GET", "/v1/me/devices", token=device["token"])["devices"]] != [device["id"]]:
        fail("the test device is not listed")
    click(coach_page, "push-toggle")
    wait_for(coach_page, lambda d: testid(d, "push-toggle").get_attribute("data-message") == "pushDisabled"
             and testid(d, "push-toggle").get_attribute("aria-pressed") == "false", "the toggle off")
    left = server.http("GET", "/v1/me/devices", token=device["token"])["devices"]
    if left:
        fail(f"turning notifications off left the device on the server: {left}")
    checks.ok("turning notifications off deletes this browser's device (DELETE /v1/me/devices/{id})")

    # 5. Phone width: the list and the conversation stack.
    client_page.set_window_size(390, 800)
    wait_for(client_page, lambda d: testid(d, "composer-input").is_displayed()
             and not testid(d, "thread-list").is_displayed(), "the stacked phone layout (conversation only)")
    click(client_page, "back-button")
    wait_for(client_page, lambda d: testid(d, "thread-list").is_displayed()
             and not testid(d, "composer-input").is_displayed(), "the stacked phone layout (list only)")
    click(client_page, "thread-item")
    wait_for(client_page, lambda d: testid(d, "composer-input").is_displayed(), "the conversation again at phone width")
    checks.ok("phone width (390 px): list and conversation stack, Back returns to the list")

    # 6. Arabic: the page turns right-to-left.
    click(client_page, "lang-switch")
    wait_for(client_page, lambda d: js(d, "return [document.documentElement.lang, document.documentElement.dir]")
             == ["ar", "rtl"], "<html lang=ar dir=rtl>")
    send_label = testid(client_page, "composer-send").text
    if not re.search(r"[\u0600-\u06FF]", send_label):
        fail(f"the send button is not in Arabic after the switch: {send_label!r}")
    if assert_no_duplicates(client_page, "client (Arabic)") != 6:  # 4 messages and 2 session invites (4b, 4b')
        fail("the conversation lost messages when the language changed")
    screenshot(client_page, "console-arabic.png")
    client_page.refresh()  # the language survives a reload, and so does the session (sessionStorage)
    wait_live(client_page, "the client after a reload")
    wait_for(client_page, lambda d: js(d, "return document.documentElement.dir") == "rtl", "rtl after a reload")
    wait_message(client_page, after_coach, "the client after a reload")
    assert_no_duplicates(client_page, "client (reloaded)")
    client_page.set_window_size(1280, 900)
    checks.ok("Arabic: <html lang=ar dir=rtl>, Arabic labels; kept across a reload with the session")

    # 7. Admin: a pending coach change request, the coaches list, and the live figures.
    server.http("POST", "/v1/me/coach-change-requests", {"coach_id": coach2["user"]["id"], "reason": "Schedule"},
                token=client["access_token"])
    admin_page = new_driver(chromium, chromedriver)
    cleanup.append(admin_page.quit)
    sign_in(admin_page, base, "admin@example.com", ADMIN_PASSWORD, "the admin")
    wait_for(admin_page, lambda d: re.fullmatch(r"\d+", testid(d, "figure-connections").text or ""),
             "a connections number in the admin figures")
    connections = int(testid(admin_page, "figure-connections").text)
    if connections < 3:
        fail(f"the admin figures show {connections} open connections; at least 3 pages are connected")
    wait_for(admin_page, lambda d: len(testids(d, "coach-row")) == 2, "the two coaches in the admin's list")
    wait_for(admin_page, lambda d: len(testids(d, "change-request")) == 1, "the pending change request")
    wait_for(admin_page, lambda d: js(d, "return document.querySelectorAll('[data-testid=admin-chart] polyline')[1]"
                                         ".getAttribute('points').split(' ').length") >= 4, "four points on the chart")
    rate = testid(admin_page, "figure-rate").text
    checks.ok(f"admin: {connections} open connections, messages/s {rate!r}, p99 "
              f"{testid(admin_page, 'figure-p99').text!r}, two coaches, one pending change request")
    request_text = testids(admin_page, "change-request")[0].text
    for name in ("Amal Client", "Carter Coach", "Dana Coach"):
        if name not in request_text:
            fail(f"the change request does not name {name}: {request_text!r}")
    # The users table: the admin, two coaches and the client; the role filter narrows it to the coaches.
    wait_for(admin_page, lambda d: len(testids(d, "user-row")) == 4, "the four users in the admin's users table")
    roles = sorted(row.get_attribute("data-role") for row in testids(admin_page, "user-row"))
    if roles != ["admin", "client", "coach", "coach"]:
        fail(f"the users table shows roles {roles}")
    js(admin_page, "const s = document.querySelector('[data-testid=users-role]'); s.value = 'coach';"
                   "s.dispatchEvent(new Event('change'));")
    wait_for(admin_page, lambda d: len(testids(d, "user-row")) == 2
             and all(r.get_attribute("data-role") == "coach" for r in testids(d, "user-row")), "only the coaches")
    checks.ok("admin: the change request names the client and both coaches; the users table lists 4 and filters by role")
    screenshot(admin_page, "console-admin.png")
    click(admin_page, "change-request-reject")
    wait_for(admin_page, lambda d: len(testids(d, "change-request")) == 0, "the rejected request to leave the list")
    pending = server.http("GET", "/v1/admin/coach-change-requests?status=pending",
                          token=server.http("POST", "/v1/auth/signin", {"email": "admin@example.com",
                                                                         "password": ADMIN_PASSWORD})["access_token"])
    if pending:
        fail(f"the change request is still pending on the server: {pending}")
    checks.ok("admin rejected the change request from the console")

    # 8. Sign out: back to the sign-in form, the session gone from sessionStorage.
    click(coach_page, "signout")
    wait_for(coach_page, lambda d: testid(d, "signin-email").is_displayed(), "the sign-in form after signing out")
    if js(coach_page, "return sessionStorage.length") != 0:
        fail("sessionStorage still holds data after signing out")
    checks.ok("sign out clears the session and shows the sign-in form")

    # 9. Phone sign-in: the development server's code is shown as a hint; a new client account signs in.
    testid(coach_page, "signin-phone").send_keys("0551234567")
    click(coach_page, "signin-send-code")
    wait_for(coach_page, lambda d: testid(d, "signin-dev-code").is_displayed(), "the development code hint")
    code = testid(coach_page, "signin-dev-code").get_attribute("data-code")
    if not re.fullmatch(r"\d{6}", code or ""):
        fail(f"the development code hint carries {code!r}")
    testid(coach_page, "signin-code").send_keys(code)
    click(coach_page, "signin-verify")
    wait_live(coach_page, "the phone client")
    wait_for(coach_page, lambda d: "+966551234567" in testid(d, "whoami").get_attribute("textContent")
             or "Client" in testid(d, "whoami").get_attribute("textContent"), "the phone client's name in the header")
    if testids(coach_page, "thread-item"):
        fail("a new phone account sees conversations that are not theirs")
    checks.ok("phone sign-in with the development code; the new account sees no one else's conversations")

    for page, who in ((coach_page, "coach"), (client_page, "client"), (admin_page, "admin")):
        errors = browser_errors(page)
        if errors:
            fail(f"the {who}'s page logged errors: {errors}")
    checks.ok("no CSP violations or uncaught errors in any page")


class Cleanup(list):
    server = None

    def run(self):
        for action in reversed(self):
            try:
                action()
            except Exception as error:  # noqa: BLE001 - clean up everything we can
                print(f"browser: cleanup: {error}", file=sys.stderr)
        self.clear()


def main():
    binary, chromium, chromedriver = prerequisites()
    checks = Checks()
    cleanup = Cleanup()
    started = time.monotonic()

    def out_of_time(signum, frame):
        raise Failure(f"the test took longer than {TOTAL_BUDGET} s")

    signal.signal(signal.SIGALRM, out_of_time)
    signal.alarm(TOTAL_BUDGET)
    failure = None
    try:
        run(binary, chromium, chromedriver, checks, cleanup)
    except Failure as error:
        failure = str(error)
    except Exception:  # noqa: BLE001 - report anything as a failure
        failure = traceback.format_exc()
    finally:
        signal.alarm(0)
        if failure:
            for index, driver in enumerate(DRIVERS):
                try:
                    lines = [f"{e.get('level')} {e.get('message')}" for e in driver.get_log("browser")]
                except Exception:  # noqa: BLE001 - the browser may be gone
                    lines = ["(no log)"]
                print(f"--- browser {index + 1} console ---\n" + "\n".join(lines[-30:]), file=sys.stderr)
            if cleanup.server:
                print(f"--- server log (tail) ---\n{cleanup.server.log_tail()}", file=sys.stderr)
        cleanup.run()
    elapsed = time.monotonic() - started
    if failure:
        print(f"browser: FAILED after {checks.passed} passed ({elapsed:.1f} s): {failure}", file=sys.stderr)
        sys.exit(1)
    print(f"browser: {checks.passed} passed ({elapsed:.1f} s; screenshots in {SCREENSHOTS})")


if __name__ == "__main__":
    main()
