#!/usr/bin/env python3
"""Drives the operations console of a real `iap serve` in a real browser (Debian's Chromium through Playwright).

The purchases come from `iap emulate` (Production, so that Look Up Order ID answers): the app's submissions are sent
to `iap serve` as the users' apps send them, Apple's notifications reach it from the emulator, and every grant reaches
a webhook receiver this script runs. Then an operator signs in and uses every page; what a person would see is
checked, and what an attacker tries (HTML and script in a product id and a user id, a forged POST, a POST without the
CSRF token or from another origin, guessing passwords) is refused or shown as text. Any dialog fails the run.

usage: console_browser_test.py --iap PATH/TO/iap [--chromium /usr/bin/chromium] [--screenshots DIR]
"""

import argparse
import base64
import hashlib
import hmac
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from playwright.sync_api import sync_playwright

BUNDLE_ID = "com.example.console"
APP_APPLE_ID = 1_234_567_890
ISSUER_ID = "57246542-96fe-1a63-e053-0824d011072a"
KEY_ID = "CONSOLE001"
HTML_PRODUCT = '<script>alert(1)</script>"><img src=x onerror=alert(2)>'
HTML_USER = '"><img src=x onerror=alert(3)><script>alert(4)</script>'
PASSWORDS = {"carol": "correct horse battery", "vic": "viewer password 1", "ada": "admin password 12"}

passed = []


def check(name, condition, detail=""):
    if not condition:
        raise AssertionError(f"{name}: {detail}")
    passed.append(name)
    print(f"  ok  {name}", flush=True)


class Receiver(BaseHTTPRequestHandler):
    """The app's backend: takes each grant and take-back, and counts them per transaction; refuses for good (422)
    those of the users in `refused`, so that they are dead-lettered at once."""

    grants = []
    refused = set()
    lock = threading.Lock()

    def do_POST(self):
        delivery = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
        with Receiver.lock:
            refuse = delivery.get("userId") in Receiver.refused
            if not refuse:
                Receiver.grants.append(delivery)
        self.send_response(422 if refuse else 200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass

    @staticmethod
    def count(transaction_id, kind="grant"):
        with Receiver.lock:
            return sum(1 for g in Receiver.grants if g.get("transactionId") == transaction_id and g.get("type") == kind)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def secret_file(path, text):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(text + "\n")
    return path


def request(method, url, body=None, headers=None):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method, headers=headers or {})
    if data is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=30) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def user_token(user, secret):
    def b64(data):
        return base64.urlsafe_b64encode(data).rstrip(b"=").decode()

    header = b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    claims = b64(json.dumps({"sub": user, "exp": int(time.time()) + 3600}).encode())
    signature = hmac.new(secret.encode(), f"{header}.{claims}".encode(), hashlib.sha256).digest()
    return f"{header}.{claims}.{b64(signature)}"


class World:
    """`iap emulate`, `iap serve` with its console, and the webhook receiver."""

    def __init__(self, iap, workdir):
        self.iap = iap
        self.workdir = workdir
        self.processes = []
        key = os.path.join(workdir, f"AuthKey_{KEY_ID}.p8")
        pem = subprocess.run(
            "openssl ecparam -name prime256v1 -genkey -noout | openssl pkcs8 -topk8 -nocrypt",
            shell=True, check=True, capture_output=True).stdout
        fd = os.open(key, os.O_WRONLY | os.O_CREAT, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(pem)
        catalog = os.path.join(workdir, "catalog.json")
        with open(catalog, "w") as f:
            json.dump({"version": 1, "products": [
                {"productId": "coins.100", "type": "consumable", "unitsPerPurchase": 100, "entitlements": []},
                {"productId": "premium", "type": "nonConsumable", "entitlements": ["premium"]},
                {"productId": "pro.monthly", "type": "autoRenewable", "subscriptionGroupId": "pro", "groupLevel": 1,
                 "duration": "P1M", "entitlements": ["pro"]},
                {"productId": HTML_PRODUCT, "type": "consumable", "unitsPerPurchase": 1, "entitlements": []},
            ]}, f)

        self.receiver = ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
        threading.Thread(target=self.receiver.serve_forever, daemon=True).start()

        serve_port = free_port()
        self.api = f"http://127.0.0.1:{serve_port}"
        emulator = self.start([
            iap, "emulate", "--port", "0", "--bundle-id", BUNDLE_ID, "--app-apple-id", str(APP_APPLE_ID),
            "--issuer-id", ISSUER_ID, "--key-id", KEY_ID, "--auth-key", key, "--environment", "Production",
            "--catalog", catalog, "--notify-url", f"{self.api}/iap/v1/notifications"], "emulator")
        self.emulator = self.read_line(emulator, "listening on ")
        self.control_token = self.read_line(emulator, "control token: ")
        root = os.path.join(workdir, "root.der")
        with open(root, "wb") as f:
            f.write(self.control("GET", "/emulator/v1/root-certificate", raw=True))

        self.user_secret = "user-secret-of-the-browser-test-0123456789"
        self.service_token = "service-token-of-the-browser-test-0123456789"
        operators = os.path.join(workdir, "operators.json")
        for name, role in [("carol", "support"), ("vic", "viewer"), ("ada", "admin")]:
            subprocess.run([iap, "console", "add-operator", name, "--role", role, "--operators-file", operators],
                           input=PASSWORDS[name] + "\n", text=True, check=True, capture_output=True)
        serve = self.start([
            iap, "serve", "--port", str(serve_port), "--data", os.path.join(workdir, "ledger"),
            "--bundle-id", BUNDLE_ID, "--environment", "Production", "--app-apple-id", str(APP_APPLE_ID),
            "--root", root, "--catalog", catalog,
            "--grant-url", f"http://127.0.0.1:{self.receiver.server_address[1]}/grants",
            "--grant-secret-file", secret_file(os.path.join(workdir, "grant.secret"), "grant-secret-0123456789abcdef"),
            "--user-jwt-secret-file", secret_file(os.path.join(workdir, "user.secret"), self.user_secret),
            "--service-token-file", secret_file(os.path.join(workdir, "service.token"), self.service_token),
            "--api-url", self.emulator, "--issuer-id", ISSUER_ID, "--key-id", KEY_ID, "--auth-key", key,
            "--reconcile-every", "off",
            "--console-port", "0", "--console-operators-file", operators,
            "--console-secret-file", secret_file(os.path.join(workdir, "console.secret"), "console-secret-0123456789abcdef"),
            "--console-insecure-cookies"], "serve")
        self.read_line(serve, "listening on ")
        self.console = self.read_line(serve, "console on ")
        print(f"emulator {self.emulator}, serve {self.api}, console {self.console}", flush=True)

    def start(self, arguments, name):
        log = open(os.path.join(self.workdir, f"{name}.log"), "wb")
        process = subprocess.Popen(arguments, stdout=subprocess.PIPE, stderr=log)
        self.processes.append(process)
        return process

    @staticmethod
    def read_line(process, prefix):
        line = process.stdout.readline().decode().strip()
        if not line.startswith(prefix):
            raise AssertionError(f"expected '{prefix}...', got {line!r}")
        return line[len(prefix):]

    def stop(self):
        for process in self.processes:
            process.terminate()
        for process in self.processes:
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
        self.receiver.shutdown()

    def control(self, method, path, body=None, raw=False):
        status, data = request(method, self.emulator + path, body,
                               {"X-Emulator-Control-Token": self.control_token})
        if status >= 300:
            raise AssertionError(f"{method} {path}: {status} {data!r}")
        return data if raw else json.loads(data)

    def service(self, method, path, body=None):
        return request(method, self.api + path, body, {"Authorization": f"Bearer {self.service_token}"})

    def buy(self, product, user=None, account="customer", granted=True):
        """A purchase on the emulator; with a user, the token is bound to them first and the app submits it."""
        token = str(uuid.uuid4())
        if user is not None:
            status, _ = self.service("POST", f"/iap/v1/users/{urllib.request.quote(user, safe='')}/account-tokens",
                                     {"appAccountToken": token})
            check(f"token bound to {user[:12]!r}", status == 201, status)
        bought = self.control("POST", "/emulator/v1/purchases",
                              {"productId": product, "appAccountToken": token, "account": account})
        if user is not None:
            status, data = request("POST", self.api + "/iap/v1/transactions",
                                   {"signedTransaction": bought["signedTransaction"]},
                                   {"Authorization": f"Bearer {user_token(user, self.user_secret)}"})
            # 202 pending: Apple's notification of the purchase is being delivered at the same moment.
            check(f"{product[:12]!r} submitted for {user[:12]!r}", status in (200, 202), f"{status} {data!r}")
            if granted:
                wait_for(lambda: Receiver.count(bought["transactionId"]) == 1, f"the grant of {product[:12]!r}")
        return bought


def wait_for(condition, what, seconds=20):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if condition():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def run(iap, chromium, screenshots):
    workdir = tempfile.mkdtemp(prefix="iap-console-browser-")
    world = World(iap, workdir)
    try:
        drive(world, chromium, screenshots)
    except Exception:
        for name in ("serve", "emulator"):
            path = os.path.join(workdir, f"{name}.log")
            with open(path, errors="replace") as f:
                tail = f.read()[-4000:]
            print(f"--- {name}.log (last 4000 characters)\n{tail}", file=sys.stderr)
        raise
    finally:
        world.stop()


def drive(world, chromium, screenshots):
    # The ledger: alice buys coins twice and a subscription, one coin purchase is refunded by Apple; a user whose id
    # is HTML buys a product whose id is HTML; a premium purchase with a token nobody claimed is the lost order.
    coins = [world.buy("coins.100", "alice", account="alice") for _ in range(2)]
    world.buy("pro.monthly", "alice", account="alice")
    world.buy(HTML_PRODUCT, HTML_USER, account="mallory")
    world.control("POST", f"/emulator/v1/transactions/{coins[1]['transactionId']}/refund", {"reason": 1})
    wait_for(lambda: Receiver.count(coins[1]["transactionId"], "revoke") == 1, "the refund's take-back")
    lost = world.control("POST", "/emulator/v1/purchases", {"productId": "premium", "account": "bob",
                                                             "appAccountToken": str(uuid.uuid4())})
    check("the lost order was never granted", Receiver.count(lost["transactionId"]) == 0)
    # Two purchases the backend refuses for good (422): dead letters at once.
    Receiver.refused.update({"dora", "erin"})
    dora = world.buy("coins.100", "dora", account="dora", granted=False)
    erin = world.buy("coins.100", "erin", account="erin", granted=False)

    console = world.console
    dialogs = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=["--no-sandbox"])

        def new_page():
            context = browser.new_context(viewport={"width": 1280, "height": 900})
            page = context.new_page()
            page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
            sizes = []
            page.on("response", lambda response: sizes.append(
                (response.url, int(response.headers.get("content-length", "-1"))))
                if response.url.startswith(console) and response.status == 200 else None)
            return context, page, sizes

        def sign_in(page, name, password=None):
            page.goto(f"{console}/console")
            page.get_by_label("Operator").fill(name)
            page.get_by_label("Password").fill(password or PASSWORDS[name])
            page.get_by_role("button", name="Sign in").click()

        def shot(page, name):
            if screenshots:
                page.screenshot(path=os.path.join(screenshots, f"console-{name}.png"), full_page=True)

        # Sign-in: a wrong password is refused with the same words as an unknown name.
        context, page, sizes = new_page()
        sign_in(page, "carol", "wrong password 1")
        wrong = page.get_by_role("alert").inner_text()
        sign_in(page, "nobody", "wrong password 1")
        check("a wrong password and an unknown name are refused alike",
              "wrong" in wrong and page.get_by_role("alert").inner_text() == wrong, wrong)
        shot(page, "sign-in")
        # By keyboard alone: the fields and the button are reached with Tab, the form sent with Enter.
        page.goto(f"{console}/console/sign-in")
        page.get_by_label("Operator").focus()
        page.keyboard.type("carol")
        page.keyboard.press("Tab")
        page.keyboard.type(PASSWORDS["carol"])
        page.keyboard.press("Tab")
        check("Tab from the password reaches Sign in",
              page.evaluate("document.activeElement.textContent") == "Sign in")
        page.keyboard.press("Enter")
        page.wait_for_url(f"{console}/console/overview")
        check("signed in by keyboard", page.get_by_role("heading", name="Overview").is_visible())

        # Overview.
        body = page.locator("main").inner_text()
        check("the overview shows the ledger", "ready" in body and "Dead letters" in body and "Transactions" in body,
              body)
        check("the overview shows the fulfillment's last hour",
              re.search(r"Fulfillment calls in the last hour\s+\d+ succeeded", body), body)
        for link in ["Overview", "Order lookup", "Customers", "Dead letters", "Notifications", "Analytics", "Audit"]:
            check(f"the header links to {link}", page.get_by_role("link", name=link, exact=True).is_visible())
        shot(page, "overview")

        # Notifications: Apple's, as this instance processed them, filtered by type.
        page.get_by_role("link", name="Notifications", exact=True).click()
        main = page.locator("main").inner_text()
        check("the refund's notification is listed", "REFUND" in main and coins[1]["transactionId"] in main, main)
        page.get_by_label("Type", exact=True).fill("REFUND")
        page.get_by_role("button", name="Filter").click()
        types = page.locator("main tbody tr td:nth-child(2)").all_inner_texts()
        check("filtered by type", types and all(t == "REFUND" for t in types), types)
        shot(page, "notifications")

        # Customer: alice's entitlements and timeline, found from the header's search.
        page.get_by_role("search").get_by_label("Customer").fill("alice")
        page.get_by_role("button", name="Search").click()
        main = page.locator("main").inner_text()
        check("alice's entitlements", "pro.monthly" in main and "coins.100" in main, main)
        check("alice's balance: one purchase of 100 coins stands", re.search(r"coins\.100\s+100\b", main), main)
        check("the refund is on the timeline", "Refunded" in main, main)
        shot(page, "customer")

        # A product id and a user id holding HTML and script show as text; nothing runs.
        page.get_by_role("search").get_by_label("Customer").fill(HTML_USER)
        page.get_by_role("button", name="Search").click()
        main = page.locator("main").inner_text()
        check("an HTML user id shows as text", HTML_USER in main, main)
        check("an HTML product id shows as text", HTML_PRODUCT in main, main)
        check("no element came from the data",
              page.locator("main img").count() == 0 and page.locator("script").count() == 0)

        # Order lookup and redelivery: the lost order has no owner, so the form asks for the customer.
        page.get_by_role("textbox", name="Order ID").fill(lost["orderId"])
        page.get_by_role("button", name="Look up").click()
        main = page.locator("main").inner_text()
        check("the order's transaction", lost["transactionId"] in main and "premium" in main, main)
        form = page.locator("form", has=page.get_by_role("button", name="Redeliver"))
        form.get_by_label("Customer").fill("bob")
        shot(page, "order")
        form.get_by_role("button", name="Redeliver").click()
        check("the page says it was redelivered", "redelivered" in page.locator("main").inner_text())
        wait_for(lambda: Receiver.count(lost["transactionId"]) >= 1, "the redelivered grant")
        # Again: nothing is granted twice.
        page.get_by_role("button", name="Redeliver").click()
        page.wait_for_load_state()
        time.sleep(0.5)
        check("the redelivery reached the webhook exactly once", Receiver.count(lost["transactionId"]) == 1,
              Receiver.count(lost["transactionId"]))
        grant = next(g for g in Receiver.grants if g.get("transactionId") == lost["transactionId"])
        check("granted to the customer the operator named", grant.get("userId") == "bob", grant)

        # Audit: the redelivery under the operator's name and role.
        page.get_by_role("link", name="Audit", exact=True).click()
        main = page.locator("main").inner_text()
        check("the audit chain is intact", "The chain is intact" in main, main)
        check("the audit names the operator", "carol (support, console)" in main and "redeliver.completed" in main,
              main)
        check("the audit has the customer reads", "customer.lookup" in main, main)
        shot(page, "audit")

        # Dead letters: the backend is mended for dora, and support retries hers now.
        page.get_by_role("link", name="Dead letters", exact=True).click()
        main = page.locator("main").inner_text()
        check("the dead letters are listed", "Dead letters (2)" in main and dora["transactionId"] in main, main)
        check("support sees no Give up", page.get_by_role("button", name="Give up").count() == 0)
        Receiver.refused.discard("dora")
        page.locator("tr", has_text=dora["transactionId"]).get_by_role("button", name="Retry now").click()
        main = page.locator("main").inner_text()
        check("Retry now delivered it", "retried: delivered" in main and "Dead letters (1)" in main, main)
        check("the retry reached the webhook once", Receiver.count(dora["transactionId"]) == 1)

        # Analytics: the page's totals are the API's.
        page.get_by_role("link", name="Analytics", exact=True).click()
        start = page.get_by_label("From", exact=True).input_value()
        end = page.get_by_label("To", exact=True).input_value()
        status, data = world.service("GET", f"/iap/v1/analytics?from={start}&to={end}&interval=day")
        check("the analytics API answers", status == 200, f"{status} {data!r}")
        totals = json.loads(data)["totals"]
        row = page.locator("tr", has=page.get_by_role("rowheader", name="Total", exact=True))
        cells = row.locator("td").all_inner_texts()
        currencies = sorted(set(totals["revenue"]) | set(totals["mrrMilliunits"]))
        for index, currency in enumerate(currencies):
            net = totals["revenue"].get(currency, {}).get("netMilliunits", 0)
            mrr = totals["mrrMilliunits"].get(currency, 0)
            shown = [round(float(cells[2 * index + k].replace(",", "")) * 1000) for k in (0, 1)]
            check(f"net revenue and MRR in {currency} equal the API's", shown == [net, mrr],
                  f"{cells} vs {net}, {mrr}")
        subscriptions = totals["subscriptions"]
        counts = cells[2 * len(currencies):]
        check("active, new, churned, trials and conversions equal the API's",
              counts[:5] == [str(subscriptions[k]) for k in
                             ("active", "new", "churned", "trialsStarted", "trialConversions")],
              f"{counts} vs {subscriptions}")
        check("purchases and refunds equal the API's",
              counts[5:] == [str(totals["purchases"]), str(totals["refunds"])], f"{counts} vs {totals}")
        check("the charts are drawn", page.locator("figure svg").count() >= 7)
        shot(page, "analytics")

        # Forged requests from carol's session: no CSRF token, another origin.
        csrf = page.locator("input[name=csrf]").first.get_attribute("value")
        redeliver = f"{console}/console/order/redeliver"
        answer = context.request.post(redeliver, form={"order": lost["orderId"], "customer": "bob"},
                                      headers={"Origin": console})
        check("a POST without the CSRF token is refused", answer.status == 403, answer.status)
        answer = context.request.post(redeliver, form={"csrf": csrf, "order": lost["orderId"], "customer": "bob"},
                                      headers={"Origin": "http://evil.example"})
        check("a POST from another origin is refused", answer.status == 403, answer.status)
        large = [(url, size) for url, size in sizes if size > 200_000 or size < 0]
        check("no page is over 200 KB", sizes and not large, large)

        # A page the console does not have: still the console, with its header.
        answer = page.goto(f"{console}/console/nowhere")
        check("a missing page is a console page with the header", answer.status == 404
              and page.get_by_role("button", name="Sign out").is_visible()
              and page.get_by_role("search").get_by_label("Customer").is_visible())

        # Sign out.
        page.get_by_role("button", name="Sign out").click()
        page.wait_for_url(f"{console}/console/sign-in")
        page.goto(f"{console}/console/overview")
        check("signed out", page.url.endswith("/console/sign-in"))
        context.close()

        # A viewer sees no action button, and a forged POST from their session is refused.
        context, page, _ = new_page()
        sign_in(page, "vic")
        page.get_by_role("textbox", name="Order ID").fill(lost["orderId"])
        page.get_by_role("button", name="Look up").click()
        check("the viewer sees the order", lost["transactionId"] in page.locator("main").inner_text())
        check("the viewer sees no Redeliver button", page.get_by_role("button", name="Redeliver").count() == 0)
        page.get_by_role("link", name="Dead letters", exact=True).click()
        check("the viewer sees no Retry now nor Give up", page.get_by_role("button", name="Retry now").count() == 0
              and page.get_by_role("button", name="Give up").count() == 0)
        csrf = page.locator("input[name=csrf]").first.get_attribute("value")
        answer = context.request.post(redeliver, form={"csrf": csrf, "order": lost["orderId"], "customer": "vic"},
                                      headers={"Origin": console})
        check("a viewer's forged redelivery is refused", answer.status == 403, answer.status)
        context.close()

        # An admin gives erin's dead letter up: out of the count, audited under their name.
        context, page, _ = new_page()
        sign_in(page, "ada")
        page.get_by_role("link", name="Dead letters", exact=True).click()
        shot(page, "dead-letters")
        page.locator("tr", has_text=erin["transactionId"]).get_by_role("button", name="Give up").click()
        main = page.locator("main").inner_text()
        check("Give up took it out of the dead letters", "given up." in main and "Dead letters (0)" in main
              and "Given up (1)" in main, main)
        page.get_by_role("link", name="Audit", exact=True).click()
        main = page.locator("main").inner_text()
        check("the audit names the admin who gave up", "ada (admin, console)" in main and "deadLetter.giveUp" in main,
              main)
        check("erin's purchase was never granted", Receiver.count(erin["transactionId"]) == 0)
        context.close()

        # Throttling: after 5 failed sign-ins for a name, even its right password is refused for a while.
        context, page, _ = new_page()
        for _ in range(5):
            sign_in(page, "ada", "not the password")
        sign_in(page, "ada")
        check("the sixth sign-in is throttled", page.url.endswith("/console/sign-in")
              and "wrong" in page.get_by_role("alert").inner_text())
        context.close()
        browser.close()
    check("no dialog was opened", not dialogs, dialogs)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--iap", required=True)
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    parser.add_argument("--screenshots")
    arguments = parser.parse_args()
    if arguments.screenshots:
        os.makedirs(arguments.screenshots, exist_ok=True)
    run(arguments.iap, arguments.chromium, arguments.screenshots)
    print(f"console in a browser: {len(passed)} checks passed")


if __name__ == "__main__":
    main()
