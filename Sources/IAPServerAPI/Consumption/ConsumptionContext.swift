#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
public import IAPCore

/// What the ledger knows about a purchase a customer asked Apple to refund, and about the customer: the facts a
/// ``LedgerConsumptionResponder`` answers from, handed to the integrator to add what only they know.
public struct ConsumptionContext: Sendable, Hashable {
    /// The transaction the refund request is about, as the notification signed it.
    public var transaction: TransactionPayload
    /// Its ledger entry; `nil` when the ledger never recorded it.
    public var entry: LedgerEntry?
    /// The customer's stated reason.
    public var reason: ConsumptionRequestReason?
    /// When the App Store asked (the notification's `signedDate`, else when it was processed).
    public var requestedAt: Date
    /// Until when Apple takes an answer: 12 hours after the request.
    public var deadline: Date
    /// Days since the customer's first purchase in the ledger (0 when unknown).
    public var accountTenureDays: Int
    /// What the customer paid over their lifetime, in milliunits per ISO 4217 currency (`["USD": 10990]`).
    public var lifetimePurchased: [String: Int64]
    /// What was refunded to the customer over their lifetime, in milliunits per currency.
    public var lifetimeRefunded: [String: Int64]

    /// Creates a context.
    public init(
        transaction: TransactionPayload,
        entry: LedgerEntry?,
        reason: ConsumptionRequestReason?,
        requestedAt: Date,
        deadline: Date,
        accountTenureDays: Int,
        lifetimePurchased: [String: Int64],
        lifetimeRefunded: [String: Int64]
    ) {
        self.transaction = transaction
        self.entry = entry
        self.reason = reason
        self.requestedAt = requestedAt
        self.deadline = deadline
        self.accountTenureDays = accountTenureDays
        self.lifetimePurchased = lifetimePurchased
        self.lifetimeRefunded = lifetimeRefunded
    }
}

/// What only the integrator knows about a refund request: the customer's consent to share data, how much of the
/// purchase they used, and what the integrator would like Apple to do.
public struct ConsumptionFacts: Sendable, Hashable {
    /// Whether the customer consented to sending consumption data. Without consent nothing is sent.
    public var customerConsented: Bool
    /// Whether a free sample or trial of the content was offered before the purchase.
    public var sampleContentProvided: Bool
    /// For a consumable: how many of the purchase's units the customer spent; the percentage is computed from it.
    public var unitsUsed: Int64?
    /// The percentage consumed, in milliunits (0...100000); overrides what the responder computes.
    public var consumptionPercentage: Int32?
    /// What the integrator asks Apple to do.
    public var refundPreference: RefundPreference?

    /// Creates facts.
    public init(
        customerConsented: Bool,
        sampleContentProvided: Bool = false,
        unitsUsed: Int64? = nil,
        consumptionPercentage: Int32? = nil,
        refundPreference: RefundPreference? = nil
    ) {
        self.customerConsented = customerConsented
        self.sampleContentProvided = sampleContentProvided
        self.unitsUsed = unitsUsed
        self.consumptionPercentage = consumptionPercentage
        self.refundPreference = refundPreference
    }
}

/// What a ``LedgerConsumptionResponder`` did with one refund request.
public struct ConsumptionAnswer: Sendable, Hashable {
    /// What it answered from.
    public var context: ConsumptionContext
    /// The body sent to Send Consumption Information, or that would have been sent.
    public var request: ConsumptionRequest
    /// Whether it was sent.
    public var sent: Bool
    /// Why it was not sent: no consent, past Apple's deadline, a transaction the ledger does not know.
    public var notSentBecause: String?

    /// Creates an answer.
    public init(context: ConsumptionContext, request: ConsumptionRequest, sent: Bool, notSentBecause: String?) {
        self.context = context
        self.request = request
        self.sent = sent
        self.notSentBecause = notSentBecause
    }
}
