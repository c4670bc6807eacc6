#!/usr/bin/env python3
"""Drives `iap emulate` with Apple's official Python App Store Server Library and checks its answers.

Apple's `AppStoreServerAPIClient` talks to the emulator's base URL; every signed transaction, renewal info and
notification it gets back is verified by Apple's `SignedDataVerifier` (strict X.509 checks, no online checks)
against the emulator's root certificate. Any mismatch exits non-zero.

usage: python_compat.py --iap PATH/TO/iap
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, HTTPServer

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from appstoreserverlibrary.api_client import APIError, APIException, AppStoreServerAPIClient, GetTransactionHistoryVersion
from appstoreserverlibrary.models.Environment import Environment
from appstoreserverlibrary.models.ExtendReasonCode import ExtendReasonCode
from appstoreserverlibrary.models.ExtendRenewalDateRequest import ExtendRenewalDateRequest
from appstoreserverlibrary.models.MassExtendRenewalDateRequest import MassExtendRenewalDateRequest
from appstoreserverlibrary.models.NotificationHistoryRequest import NotificationHistoryRequest
from appstoreserverlibrary.models.NotificationTypeV2 import NotificationTypeV2
from appstoreserverlibrary.models.SendAttemptResult import SendAttemptResult
from appstoreserverlibrary.models.Status import Status
from appstoreserverlibrary.models.TransactionHistoryRequest import Order, TransactionHistoryRequest
from appstoreserverlibrary.models.UpdateAppAccountTokenRequest import UpdateAppAccountTokenRequest
from appstoreserverlibrary.signed_data_verifier import SignedDataVerifier

BUNDLE_ID = "com.example.pythoncompat"
APP_APPLE_ID = 1_122_334_455
ISSUER_ID = "57246542-96fe-1a63-e053-0824d011072a"
KEY_ID = "PYCOMPAT1"

passed = []


def check(name, condition, detail=""):
    if not condition:
        raise AssertionError(f"{name}: {detail}")
    passed.append(name)
    print(f"  ok  {name}")


class Receiver(BaseHTTPRequestHandler):
    """The app's server: collects the notifications the emulator posts."""

    received = []

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length)
        Receiver.received.append(json.loads(body))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


def control(base_url, token, method, path, body=None):
    """A control request: the emulator's token in X-Emulator-Control-Token, JSON in and out."""
    data = None if body is None else json.dumps(body).encode()
    headers = {"Content-Type": "application/json", "X-Emulator-Control-Token": token}
    request = urllib.request.Request(base_url + path, data=data, method=method, headers=headers)
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.read()


def control_status(base_url, method, path, headers):
    """The status of a control request sent with exactly these headers."""
    request = urllib.request.Request(base_url + path, data=b"{}", method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def make_client(pem, base_url, bundle_id=BUNDLE_ID):
    client = AppStoreServerAPIClient(pem, KEY_ID, ISSUER_ID, bundle_id, Environment.SANDBOX)
    # Apple's client builds its base URL from the environment; point it at the emulator.
    client._base_url = base_url
    return client


def expect_api_error(name, call, status, api_error=None):
    try:
        call()
    except APIException as error:
        ok = error.http_status_code == status and (api_error is None or error.api_error == api_error)
        check(name, ok, f"got HTTP {error.http_status_code}, {error.api_error} {error.raw_api_error}")
        return
    raise AssertionError(f"{name}: no APIException")


def run(iap):
    workdir = tempfile.mkdtemp(prefix="iap-python-compat-")
    key = ec.generate_private_key(ec.SECP256R1())
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    key_file = os.path.join(workdir, f"AuthKey_{KEY_ID}.p8")
    with open(key_file, "wb") as f:
        f.write(pem)

    receiver = HTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=receiver.serve_forever, daemon=True).start()
    notify_url = f"http://127.0.0.1:{receiver.server_address[1]}/notifications"

    log = open(os.path.join(workdir, "emulator.log"), "wb")
    emulator = subprocess.Popen(
        [iap, "emulate", "--port", "0", "--bundle-id", BUNDLE_ID, "--app-apple-id", str(APP_APPLE_ID),
         "--issuer-id", ISSUER_ID, "--key-id", KEY_ID, "--auth-key", key_file, "--notify-url", notify_url],
        stdout=subprocess.PIPE, stderr=log,
    )
    try:
        line = emulator.stdout.readline().decode().strip()
        if not line.startswith("listening on "):
            raise AssertionError(f"iap emulate did not start: {line!r}")
        base_url = line[len("listening on "):]
        token_line = emulator.stdout.readline().decode().strip()
        if not token_line.startswith("control token: "):
            raise AssertionError(f"iap emulate printed no control token: {token_line!r}")
        control_token = token_line[len("control token: "):]
        print(f"emulator at {base_url}")

        # The control plane is closed: no token, a foreign origin, or text/plain are refused.
        purchases = "/emulator/v1/purchases"
        check("401 for a control request without the token",
              control_status(base_url, "POST", purchases, {"Content-Type": "application/json"}) == 401)
        check("403 for a control request from another origin",
              control_status(base_url, "POST", purchases, {"Content-Type": "application/json",
                                                            "X-Emulator-Control-Token": control_token,
                                                            "Origin": "http://evil.example"}) == 403)
        check("415 for a text/plain control request",
              control_status(base_url, "POST", purchases, {"Content-Type": "text/plain",
                                                            "X-Emulator-Control-Token": control_token}) == 415)

        root = control(base_url, control_token, "GET", "/emulator/v1/root-certificate")
        verifier = SignedDataVerifier([root], False, Environment.SANDBOX, BUNDLE_ID, APP_APPLE_ID)
        client = make_client(pem, base_url)

        # Purchases through the control endpoint.
        premium = json.loads(control(base_url, control_token, "POST", "/emulator/v1/purchases", {"productId": "premium"}))
        coins = [json.loads(control(base_url, control_token, "POST", "/emulator/v1/purchases", {"productId": "coins.100"}))
                 for _ in range(22)]
        monthly = json.loads(control(base_url, control_token, "POST", "/emulator/v1/purchases", {"productId": "pro.monthly"}))
        bought = [premium["transactionId"]] + [c["transactionId"] for c in coins] + [monthly["transactionId"]]

        # get_transaction_info
        info = client.get_transaction_info(premium["transactionId"])
        transaction = verifier.verify_and_decode_signed_transaction(info.signedTransactionInfo)
        check("get_transaction_info", transaction.transactionId == premium["transactionId"]
              and transaction.productId == "premium" and transaction.bundleId == BUNDLE_ID,
              f"{transaction}")

        # get_app_transaction_info: the customer's signed app transaction, verified by Apple's verifier
        app_info = client.get_app_transaction_info(premium["transactionId"])
        app = verifier.verify_and_decode_app_transaction(app_info.signedAppTransactionInfo)
        check("get_app_transaction_info", app.bundleId == BUNDLE_ID and app.appTransactionId is not None
              and app.appTransactionId == transaction.appTransactionId, f"{app}")

        # get_transaction_history, v2, paging
        request = TransactionHistoryRequest(sort=Order.ASCENDING)
        listed, revision, pages = [], None, 0
        while True:
            page = client.get_transaction_history(premium["transactionId"], revision, request,
                                                  GetTransactionHistoryVersion.V2)
            pages += 1
            check(f"get_transaction_history page {pages} identity", page.bundleId == BUNDLE_ID
                  and page.appAppleId == APP_APPLE_ID and page.environment == Environment.SANDBOX, f"{page}")
            listed += [verifier.verify_and_decode_signed_transaction(s).transactionId for s in page.signedTransactions]
            revision = page.revision
            if not page.hasMore:
                break
        check("get_transaction_history paging", pages == 2 and listed == bought, f"{pages} pages, {listed}")

        # set_app_account_token: the purchase carries the token from then on (and moves to the end of the
        # history's modification order, as a changed transaction does)
        token = "7e3fb20b-4cdb-47cc-936d-99d65f608138"
        client.set_app_account_token(premium["originalTransactionId"], UpdateAppAccountTokenRequest(appAccountToken=token))
        updated = verifier.verify_and_decode_signed_transaction(
            client.get_transaction_info(premium["transactionId"]).signedTransactionInfo)
        check("set_app_account_token", str(updated.appAccountToken).lower() == token, f"{updated.appAccountToken}")


        # extend_subscription_renewal_date: the subscription ends 30 days later; the same request again changes nothing
        original = monthly["originalTransactionId"]
        before = verifier.verify_and_decode_signed_transaction(
            client.get_transaction_info(monthly["transactionId"]).signedTransactionInfo).expiresDate
        extension = ExtendRenewalDateRequest(extendByDays=30, extendReasonCode=ExtendReasonCode.SERVICE_ISSUE_OR_OUTAGE,
                                             requestIdentifier="python-compat-outage-1")
        extended = client.extend_subscription_renewal_date(original, extension)
        check("extend_subscription_renewal_date", extended.success and extended.originalTransactionId == original
              and extended.effectiveDate == before + 30 * 86_400_000, f"{extended} (was {before})")
        again = client.extend_subscription_renewal_date(original, extension)
        check("extend_subscription_renewal_date is idempotent by request", again.effectiveDate == extended.effectiveDate,
              f"{again}")

        # extend_renewal_date_for_all_active_subscribers, then its status: the one active pro.monthly subscriber
        mass = client.extend_renewal_date_for_all_active_subscribers(MassExtendRenewalDateRequest(
            extendByDays=7, extendReasonCode=ExtendReasonCode.SERVICE_ISSUE_OR_OUTAGE,
            requestIdentifier="python-compat-mass-1", productId="pro.monthly"))
        check("extend_renewal_date_for_all_active_subscribers", mass.requestIdentifier == "python-compat-mass-1")
        mass_status = client.get_status_of_subscription_renewal_date_extensions("python-compat-mass-1", "pro.monthly")
        check("get_status_of_subscription_renewal_date_extensions", mass_status.complete
              and mass_status.succeededCount == 1 and mass_status.failedCount == 0, f"{mass_status}")

        # get_all_subscription_statuses through a renewal and a billing failure

        def status_of(statuses=None):
            response = client.get_all_subscription_statuses(original, statuses)
            items = [item for group in response.data for item in group.lastTransactions]
            for item in items:
                verifier.verify_and_decode_signed_transaction(item.signedTransactionInfo)
                verifier.verify_and_decode_renewal_info(item.signedRenewalInfo)
            return items

        check("get_all_subscription_statuses active", [i.status for i in status_of()] == [Status.ACTIVE])
        control(base_url, control_token, "POST", f"/emulator/v1/subscriptions/{original}/renew")
        renewed = status_of([Status.ACTIVE])
        latest = verifier.verify_and_decode_signed_transaction(renewed[0].signedTransactionInfo)
        check("get_all_subscription_statuses after renewal", len(renewed) == 1
              and latest.transactionId != monthly["transactionId"], f"{latest}")
        control(base_url, control_token, "POST", f"/emulator/v1/subscriptions/{original}/fail-billing")
        control(base_url, control_token, "POST", f"/emulator/v1/subscriptions/{original}/renew")
        check("get_all_subscription_statuses billing retry",
              [i.status for i in status_of()] == [Status.BILLING_RETRY])
        check("get_all_subscription_statuses status filter", status_of([Status.ACTIVE]) == [])

        # get_refund_history after a refund
        refunded = coins[3]["transactionId"]
        control(base_url, control_token, "POST", f"/emulator/v1/transactions/{refunded}/refund", {"reason": 1})
        refunds = client.get_refund_history(premium["transactionId"], None)
        decoded = [verifier.verify_and_decode_signed_transaction(s) for s in refunds.signedTransactions]
        check("get_refund_history", [t.transactionId for t in decoded] == [refunded]
              and decoded[0].revocationDate is not None and refunds.hasMore is False, f"{decoded}")

        # look_up_order_id: order ids come from the App Store's receipt emails, which sandbox purchases never get;
        # the emulator in the Sandbox answers 404 as the sandbox does, and Apple's client raises it as an APIException.
        expect_api_error("look_up_order_id in the Sandbox", lambda: client.look_up_order_id(premium["orderId"]), 404)

        # request_test_notification, delivered to the receiver and reported by get_test_notification_status
        token = client.request_test_notification().testNotificationToken
        deadline = time.time() + 10
        status = None
        while time.time() < deadline:
            status = client.get_test_notification_status(token)
            if status.sendAttempts:
                break
            time.sleep(0.1)
        check("get_test_notification_status", status is not None and status.sendAttempts
              and status.sendAttempts[-1].sendAttemptResult == SendAttemptResult.SUCCESS, f"{status}")
        test = verifier.verify_and_decode_notification(status.signedPayload)
        check("request_test_notification signed payload", test.notificationType == NotificationTypeV2.TEST)
        posted = [verifier.verify_and_decode_notification(n["signedPayload"]) for n in Receiver.received]
        check("notifications posted to --notify-url", any(n.notificationType == NotificationTypeV2.TEST for n in posted)
              and any(n.notificationType == NotificationTypeV2.REFUND for n in posted),
              f"{[n.rawNotificationType for n in posted]}")

        # get_notification_history, paging
        now_ms = int(time.time() * 1000)
        history_request = NotificationHistoryRequest(startDate=now_ms - 86_400_000, endDate=now_ms + 400 * 86_400_000)
        types, token, pages = [], None, 0
        while True:
            history = client.get_notification_history(token, history_request)
            pages += 1
            types += [verifier.verify_and_decode_notification(item.signedPayload).notificationType
                      for item in history.notificationHistory]
            token = history.paginationToken
            if not history.hasMore:
                break
        wanted = {NotificationTypeV2.ONE_TIME_CHARGE, NotificationTypeV2.SUBSCRIBED, NotificationTypeV2.DID_RENEW,
                  NotificationTypeV2.DID_FAIL_TO_RENEW, NotificationTypeV2.REFUND, NotificationTypeV2.TEST,
                  NotificationTypeV2.RENEWAL_EXTENDED, NotificationTypeV2.RENEWAL_EXTENSION}
        check("get_notification_history paging", pages >= 2 and wanted <= set(types), f"{pages} pages, {types}")

        # Apple's error bodies and statuses
        expect_api_error("error 4040010 TransactionIdNotFound",
                         lambda: client.get_transaction_info("9999999999"), 404, APIError.TRANSACTION_ID_NOT_FOUND)
        expect_api_error("error 4000006 InvalidTransactionId",
                         lambda: client.get_transaction_info("abc"), 400, APIError.INVALID_TRANSACTION_ID)
        stranger_pem = ec.generate_private_key(ec.SECP256R1()).private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
        expect_api_error("401 for a token of another key",
                         lambda: make_client(stranger_pem, base_url).get_transaction_info(premium["transactionId"]), 401)
        expect_api_error("401 for a token of another app",
                         lambda: make_client(pem, base_url, "com.example.other").get_transaction_info(
                             premium["transactionId"]), 401)
        control(base_url, control_token, "POST", "/emulator/v1/faults", {"status": 429, "count": 1, "retryAfterMillis": 100})
        expect_api_error("error 4290000 RateLimitExceeded",
                         lambda: client.get_transaction_info(premium["transactionId"]), 429, APIError.RATE_LIMIT_EXCEEDED)
        control(base_url, control_token, "POST", "/emulator/v1/faults", {"status": 500, "count": 1})
        expect_api_error("error 5000000 GeneralInternal",
                         lambda: client.get_transaction_info(premium["transactionId"]), 500, APIError.GENERAL_INTERNAL)
    finally:
        emulator.terminate()
        try:
            emulator.wait(timeout=10)
        except subprocess.TimeoutExpired:
            emulator.kill()
            emulator.wait()
        receiver.shutdown()
        log.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iap", required=True, help="path to the built iap executable")
    arguments = parser.parse_args()
    try:
        run(arguments.iap)
    except AssertionError as error:
        print(f"FAILED: {error}", file=sys.stderr)
        print(f"{len(passed)} checks passed before the failure", file=sys.stderr)
        return 1
    except APIException as error:
        print(f"FAILED: unexpected APIException HTTP {error.http_status_code} {error.raw_api_error} "
              f"{error.error_message}", file=sys.stderr)
        return 1
    print(f"python compatibility: {len(passed)} checks passed with Apple's app-store-server-library")
    return 0


if __name__ == "__main__":
    sys.exit(main())
