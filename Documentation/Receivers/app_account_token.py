import uuid


def app_account_token(user_id: str, namespace: str) -> str:
    """The appAccountToken of a user, as swift-iap's AppAccountToken.derive(from:namespace:) makes it: the version 5
    (name-based, SHA-1) UUID of the user id's UTF-8 bytes in the apps' namespace UUID, lowercase."""
    return str(uuid.uuid5(uuid.UUID(namespace), user_id))


if __name__ == "__main__":
    import sys

    print(app_account_token(sys.argv[2], sys.argv[1]))
