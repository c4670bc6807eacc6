package import IAPCore

/// The case of an outcome, matched by pattern, for tests: `#expect(outcome.isDelivered)`.
///
/// A failed expectation shows the whole outcome (its entry or its error), and a misspelt case does not compile,
/// which a comparison of ``DeliveryOutcome/name`` with a string would leave unseen.
extension DeliveryOutcome {
    package var isDelivered: Bool {
        if case .delivered = self { true } else { false }
    }

    package var isAlreadyDelivered: Bool {
        if case .alreadyDelivered = self { true } else { false }
    }

    package var isPending: Bool {
        if case .pending = self { true } else { false }
    }

    package var isAwaitingOwner: Bool {
        if case .awaitingOwner = self { true } else { false }
    }

    package var isDeferred: Bool {
        if case .deferred = self { true } else { false }
    }

    package var isRevoked: Bool {
        if case .revoked = self { true } else { false }
    }

    package var isRejected: Bool {
        if case .rejected = self { true } else { false }
    }

    /// The error of a rejected outcome; `nil` for any other.
    package var rejection: IAPError? {
        if case .rejected(let error) = self { error } else { nil }
    }
}
