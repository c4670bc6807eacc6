import IAPCore

extension SimulatedAppStoreEngine {
    /// The other members of an account's family, in the order they joined.
    func familyMembers(of account: String) -> [String] {
        guard let familyId = accounts[account]?.familyId else { return [] }
        return families[familyId, default: []].filter { $0 != account }
    }

    /// Adds `member` to the family of `organizer` (creating it), and shares with everyone what the others share.
    mutating func addFamilyMember(_ member: String, organizer: String) throws {
        guard member != organizer else {
            throw IAPError(.invalidArgument, "an account cannot join its own family")
        }
        ensureAccount(member)
        ensureAccount(organizer)
        let familyId = accounts[organizer]?.familyId ?? organizer
        if let current = accounts[member]?.familyId {
            guard current == familyId else {
                throw IAPError(.invalidArgument, "\(member) already belongs to another family")
            }
            return
        }
        if accounts[organizer]?.familyId == nil {
            accounts[organizer]?.familyId = familyId
            families[familyId] = [organizer]
        }
        let others = families[familyId, default: []]
        accounts[member]?.familyId = familyId
        families[familyId, default: []].append(member)
        for other in others {
            try shareExistingPurchases(of: other, with: member)
            try shareExistingPurchases(of: member, with: other)
        }
    }

    /// Removes `member` from its family: what was shared with the member and what the member shared with the
    /// others is revoked (`FAMILY_REVOKE`, `REVOKE`).
    mutating func removeFamilyMember(_ member: String) throws {
        guard let familyId = accounts[member]?.familyId else {
            throw IAPError(.invalidArgument, "\(member) belongs to no family")
        }
        let others = familyMembers(of: member)
        accounts[member]?.familyId = nil
        families[familyId]?.removeAll { $0 == member }
        var revocable: [String] = []
        for record in transactions.values where record.payload.revocationDate == nil {
            guard let source = record.sharedFrom, let sourceAccount = transactions[source]?.account else { continue }
            let sharedWithMember = record.account == member && others.contains(sourceAccount)
            let sharedByMember = sourceAccount == member && others.contains(record.account)
            guard sharedWithMember || sharedByMember else { continue }
            // A subscription mirror is revoked through its latest transaction only.
            if let mirror = subscription(of: record), mirror.latestTransactionId != record.id { continue }
            revocable.append(record.id)
        }
        for id in revocable.sorted(by: Self.numericOrder) {
            try revokeFamilyShared(id)
        }
    }

    /// Shares an account's live family-shareable purchases with one family member.
    private mutating func shareExistingPurchases(of owner: String, with member: String) throws {
        for id in transactionIdsByAccount[owner, default: []] {
            guard let record = transactions[id], record.sharedFrom == nil, record.payload.revocationDate == nil,
                let productId = record.payload.productId, isFamilyShareable(productId),
                products[productId]?.kind == .nonConsumable
            else { continue }
            try shareOneTimePurchase(record, with: member)
        }
        let owned = subscriptions.values.filter { $0.account == owner && $0.sharedFrom == nil && $0.isLive }
        for subscription in owned.sorted(by: { Self.numericOrder($0.originalTransactionId, $1.originalTransactionId) })
        {
            guard isFamilyShareable(subscription.productId) else { continue }
            let shared = subscriptions.values.contains {
                $0.sharedFrom == subscription.originalTransactionId && $0.account == member && $0.isLive
            }
            if !shared {
                try shareSubscription(subscription, with: member, type: .subscribed, subtype: .initialBuy)
            }
        }
    }
}
