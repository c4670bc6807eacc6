#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

extension StaticProductCatalog {
    /// The versions of the swift-iap catalog format this loader reads.
    public static let supportedCatalogVersions: ClosedRange<Int> = 1...1

    /// The major format versions of Xcode `.storekit` files this loader reads.
    public static let supportedStoreKitVersions: ClosedRange<Int> = 3...5

    /// The duration a non-renewing subscription from a `.storekit` file gets when nothing else names one: one month.
    public static let defaultNonRenewingDuration = SubscriptionPeriod(value: 1, unit: .month)

    /// Loads a catalog from JSON: the swift-iap catalog format, or an Xcode `.storekit` file.
    ///
    /// The format is told by the top-level `version`: a number is the swift-iap format
    /// (`Documentation/ProductCatalog.md`), an object `{"major": 3...5, "minor": ...}` is a `.storekit` file.
    ///
    /// A `.storekit` file has no entitlements and no durations for non-renewing subscriptions, so:
    /// - each product unlocks the entitlement named after its product id (as a ``CatalogProduct`` made in code and
    ///   a swift-iap catalog without `entitlements` do) unless `entitlements` maps it;
    /// - a non-renewing subscription lasts `nonRenewingDurations[productId]`, else its
    ///   `recurringSubscriptionPeriod` if the file has one, else `defaultNonRenewingDuration`.
    ///
    /// The file's `settings` become ``storeKitSettings``. For the swift-iap format the overlays apply the same
    /// way, but a non-renewing subscription must name its `duration` in the file or in `nonRenewingDurations`.
    ///
    /// - Parameters:
    ///   - jsonData: The file's bytes.
    ///   - entitlements: Entitlement ids by product id; they replace what the file says for those products.
    ///   - nonRenewingDurations: Durations of non-renewing subscriptions by product id; they replace the file's.
    ///   - defaultNonRenewingDuration: The duration of a `.storekit` non-renewing subscription that nothing else
    ///     gives one; `nil` makes such a product an error. One month by default.
    /// - Throws: ``IAPError`` with code ``IAPError/Code/invalidConfiguration``: for malformed JSON (naming the
    ///   path of the bad value), an unsupported version (naming the supported ones), an unknown product type,
    ///   an overlay naming a product the file lacks, or a product the catalog rejects
    ///   (see ``init(products:storeKitSettings:)``).
    public init(
        jsonData: Data,
        entitlements: [String: [String]] = [:],
        nonRenewingDurations: [String: SubscriptionPeriod] = [:],
        defaultNonRenewingDuration: SubscriptionPeriod? = Self.defaultNonRenewingDuration
    ) throws {
        let decoder = JSONDecoder()
        let probe: FormatProbe
        do {
            probe = try decoder.decode(FormatProbe.self, from: jsonData)
        } catch {
            throw Self.malformed(error)
        }
        var products: [CatalogProduct]
        var settings: StoreKitConfigurationSettings?
        switch probe.format {
        case .catalog(let version):
            guard Self.supportedCatalogVersions.contains(version) else {
                throw IAPError(
                    .invalidConfiguration,
                    "The catalog has format version \(version); this version of swift-iap reads version 1."
                )
            }
            let file: CatalogFile
            do {
                file = try decoder.decode(CatalogFile.self, from: jsonData)
            } catch {
                throw Self.malformed(error)
            }
            products = file.products.map(\.catalogProduct)
        case .storeKit(let major, let minor):
            guard Self.supportedStoreKitVersions.contains(major) else {
                throw IAPError(
                    .invalidConfiguration,
                    "The .storekit file has format version \(major).\(minor); swift-iap reads versions 3, 4 and 5."
                )
            }
            let file: StoreKitConfigurationFile
            do {
                file = try decoder.decode(StoreKitConfigurationFile.self, from: jsonData)
            } catch {
                throw Self.malformed(error)
            }
            products = try Self.products(of: file)
            settings = file.settings?.configurationSettings ?? StoreKitConfigurationSettings()
        }
        products = try Self.applying(
            entitlements: entitlements,
            nonRenewingDurations: nonRenewingDurations,
            to: products
        )
        if settings != nil, let defaultNonRenewingDuration {
            for index in products.indices where products[index].kind == .nonRenewing && products[index].duration == nil
            {
                products[index].duration = defaultNonRenewingDuration
            }
        }
        try self.init(products: products, storeKitSettings: settings)
    }

    /// Loads a catalog from a JSON file: the swift-iap catalog format, or an Xcode `.storekit` file.
    ///
    /// Reads the file and decodes it as
    /// ``init(jsonData:entitlements:nonRenewingDurations:defaultNonRenewingDuration:)`` does.
    ///
    /// - Parameters:
    ///   - url: The file.
    ///   - entitlements: Entitlement ids by product id; they replace what the file says for those products.
    ///   - nonRenewingDurations: Durations of non-renewing subscriptions by product id; they replace the file's.
    ///   - defaultNonRenewingDuration: The duration of a `.storekit` non-renewing subscription that nothing else
    ///     gives one; `nil` makes such a product an error.
    /// - Throws: ``IAPError`` with code ``IAPError/Code/invalidConfiguration`` when the file cannot be read or
    ///   does not describe a valid catalog.
    public init(
        contentsOf url: URL,
        entitlements: [String: [String]] = [:],
        nonRenewingDurations: [String: SubscriptionPeriod] = [:],
        defaultNonRenewingDuration: SubscriptionPeriod? = Self.defaultNonRenewingDuration
    ) throws {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw IAPError(
                .invalidConfiguration,
                "Cannot read the catalog file \(url.path(percentEncoded: false)): \(error)",
                underlying: SendableErrorBox(error)
            )
        }
        try self.init(
            jsonData: data,
            entitlements: entitlements,
            nonRenewingDurations: nonRenewingDurations,
            defaultNonRenewingDuration: defaultNonRenewingDuration
        )
    }

    private static func products(of file: StoreKitConfigurationFile) throws -> [CatalogProduct] {
        var entries: [(product: StoreKitConfigurationFile.Product, groupId: String?)] = []
        entries += (file.products ?? []).map { ($0, nil) }
        entries += (file.nonRenewingSubscriptions ?? []).map { ($0, nil) }
        for group in file.subscriptionGroups ?? [] {
            entries += (group.subscriptions ?? []).map { ($0, $0.subscriptionGroupID ?? group.id) }
        }
        return try entries.map { entry in
            let source = entry.product
            guard let kind = source.kind else {
                throw IAPError(
                    .invalidConfiguration,
                    "The .storekit product '\(source.productID)' has type '\(source.type)'; expected Consumable, "
                        + "NonConsumable, NonRenewingSubscription or RecurringSubscription."
                )
            }
            var period: SubscriptionPeriod?
            if let text = source.recurringSubscriptionPeriod {
                guard let parsed = SubscriptionPeriod(iso8601: text) else {
                    throw IAPError(
                        .invalidConfiguration,
                        "The .storekit product '\(source.productID)' has recurringSubscriptionPeriod '\(text)', "
                            + "which is not a one-unit ISO 8601 period such as P1M."
                    )
                }
                period = parsed
            }
            return CatalogProduct(
                productId: source.productID,
                kind: kind,
                subscriptionGroupId: kind == .autoRenewable ? entry.groupId : nil,
                groupLevel: kind == .autoRenewable ? source.groupNumber : nil,
                duration: kind == .autoRenewable || kind == .nonRenewing ? period : nil,
                displayName: source.displayName,
                familyShareable: source.familyShareable ?? false
            )
        }
    }

    private static func applying(
        entitlements: [String: [String]],
        nonRenewingDurations: [String: SubscriptionPeriod],
        to products: [CatalogProduct]
    ) throws -> [CatalogProduct] {
        let ids = Set(products.map(\.productId))
        let unknown = Set(entitlements.keys).union(nonRenewingDurations.keys).subtracting(ids).sorted()
        if !unknown.isEmpty {
            throw IAPError(
                .invalidConfiguration,
                "The overlay names products the catalog file does not have: \(unknown.joined(separator: ", "))."
            )
        }
        return try products.map { product in
            var product = product
            if let mapped = entitlements[product.productId] {
                product.entitlements = mapped
            }
            if let duration = nonRenewingDurations[product.productId] {
                guard product.kind == .nonRenewing else {
                    throw IAPError(
                        .invalidConfiguration,
                        "nonRenewingDurations names '\(product.productId)', which is \(product.kind.rawValue), "
                            + "not nonRenewing."
                    )
                }
                product.duration = duration
            }
            return product
        }
    }

    private static func malformed(_ error: any Error) -> IAPError {
        guard let decoding = error as? DecodingError else {
            return IAPError(
                .invalidConfiguration,
                "The catalog is not valid JSON: \(error)",
                underlying: SendableErrorBox(error)
            )
        }
        func path(_ context: DecodingError.Context, _ last: (any CodingKey)? = nil) -> String {
            var text = ""
            for key in context.codingPath + (last.map { [$0] } ?? []) {
                if let index = key.intValue {
                    text += "[\(index)]"
                } else {
                    text += (text.isEmpty ? "" : ".") + key.stringValue
                }
            }
            return text.isEmpty ? "the top level" : "'\(text)'"
        }
        let detail: String
        switch decoding {
        case .keyNotFound(let key, let context):
            detail = "missing key at \(path(context, key))"
        case .valueNotFound(_, let context):
            detail = "missing value at \(path(context))"
        case .typeMismatch(let type, let context):
            detail = "wrong type at \(path(context)): expected \(type)"
        case .dataCorrupted(let context):
            detail = "invalid value at \(path(context)): \(context.debugDescription)"
        @unknown default:
            detail = String(describing: decoding)
        }
        return IAPError(
            .invalidConfiguration,
            "The catalog JSON is malformed: \(detail).",
            underlying: SendableErrorBox(error)
        )
    }
}

/// The format of a catalog file, told by its top-level `version`.
private enum CatalogFileFormat {
    case catalog(version: Int)
    case storeKit(major: Int, minor: Int)
}

/// Reads only the top-level `version` of a catalog file.
private struct FormatProbe: Decodable {
    var format: CatalogFileFormat

    private enum CodingKeys: String, CodingKey {
        case version
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        guard container.contains(.version) else {
            throw DecodingError.keyNotFound(
                CodingKeys.version,
                DecodingError.Context(
                    codingPath: [],
                    debugDescription: "A catalog file needs a top-level version"
                )
            )
        }
        if let number = try? container.decode(Int.self, forKey: .version) {
            format = .catalog(version: number)
        } else if let version = try? container.decode(StoreKitConfigurationFile.Version.self, forKey: .version) {
            format = .storeKit(major: version.major, minor: version.minor ?? 0)
        } else {
            throw DecodingError.dataCorruptedError(
                forKey: .version,
                in: container,
                debugDescription:
                    "expected a number (swift-iap catalog) or an object with major and minor (.storekit file)"
            )
        }
    }
}
