import IAPCore
extension APIErrorCode {
    /// What Apple documents about one code.
    struct Entry: Sendable {
        let name: String
        let httpStatus: Int
        let summary: String
    }

    /// Apple's name of the code, such as `TransactionIdNotFoundError`; `nil` for a code this version does not know.
    public var name: String? {
        Self.catalog[rawValue]?.name
    }

    /// The HTTP status Apple documents with the code; `nil` for a code this version does not know.
    public var httpStatus: Int? {
        Self.catalog[rawValue]?.httpStatus
    }

    /// Apple's one-sentence description of the code; `nil` for a code this version does not know.
    public var summary: String? {
        Self.catalog[rawValue]?.summary
    }

    /// Whether the same request can succeed when tried again later.
    ///
    /// `true` for the four codes Apple documents as retryable (`4040002`, `4040004`, `4040006`, `5000001`), for
    /// ``rateLimitExceeded`` (wait for `Retry-After`), for ``generalInternal`` and for any other `5xxxxxx` code,
    /// known or not. Every other code asks for a different request: ``transactionIdNotFound`` and
    /// ``originalTransactionIdNotFound`` may still succeed in the other environment, which is not a retry.
    public var isRetryable: Bool {
        switch self {
        case .accountNotFoundRetryable, .appNotFoundRetryable, .originalTransactionIdNotFoundRetryable,
            .generalInternalRetryable, .rateLimitExceeded, .generalInternal:
            return true
        default:
            return rawValue >= 5_000_000 && rawValue < 6_000_000
        }
    }

    /// Apple's documentation of every known code, by raw value.
    static let catalog: [Int64: Entry] = [
        4_000_000: Entry(
            name: "GeneralBadRequestError",
            httpStatus: 400,
            summary: "An error that indicates an invalid request."
        ),
        4_000_002: Entry(
            name: "InvalidAppIdentifierError",
            httpStatus: 400,
            summary: "An error that indicates an invalid app identifier."
        ),
        4_000_005: Entry(
            name: "InvalidRequestRevisionError",
            httpStatus: 400,
            summary: "An error that indicates an invalid request revision."
        ),
        4_000_006: Entry(
            name: "InvalidTransactionIdError",
            httpStatus: 400,
            summary: "An error that indicates an invalid transaction identifier."
        ),
        4_000_008: Entry(
            name: "InvalidOriginalTransactionIdError",
            httpStatus: 400,
            summary: "An error that indicates an invalid original transaction identifier."
        ),
        4_000_009: Entry(
            name: "InvalidExtendByDaysError",
            httpStatus: 400,
            summary: "An error that indicates an invalid extend-by-days value."
        ),
        4_000_010: Entry(
            name: "InvalidExtendReasonCodeError",
            httpStatus: 400,
            summary: "An error that indicates an invalid reason code."
        ),
        4_000_011: Entry(
            name: "InvalidRequestIdentifierError",
            httpStatus: 400,
            summary: "An error that indicates an invalid request identifier."
        ),
        4_000_012: Entry(
            name: "StartDateTooFarInPastError",
            httpStatus: 400,
            summary: "An error that indicates that the start date is earlier than the earliest allowed date."
        ),
        4_000_013: Entry(
            name: "StartDateAfterEndDateError",
            httpStatus: 400,
            summary: "An error that indicates that the end date precedes the start date, or the two dates are equal."
        ),
        4_000_014: Entry(
            name: "InvalidPaginationTokenError",
            httpStatus: 400,
            summary: "An error that indicates the pagination token is invalid."
        ),
        4_000_015: Entry(
            name: "InvalidStartDateError",
            httpStatus: 400,
            summary: "An error that indicates the start date is invalid."
        ),
        4_000_016: Entry(
            name: "InvalidEndDateError",
            httpStatus: 400,
            summary: "An error that indicates the end date is invalid."
        ),
        4_000_017: Entry(
            name: "PaginationTokenExpiredError",
            httpStatus: 400,
            summary: "An error that indicates the pagination token expired."
        ),
        4_000_018: Entry(
            name: "InvalidNotificationTypeError",
            httpStatus: 400,
            summary: "An error that indicates the notification type or subtype is invalid."
        ),
        4_000_019: Entry(
            name: "MultipleFiltersSuppliedError",
            httpStatus: 400,
            summary: "An error that indicates the request is invalid because it has too many constraints applied."
        ),
        4_000_020: Entry(
            name: "InvalidTestNotificationTokenError",
            httpStatus: 400,
            summary: "An error that indicates the test notification token is invalid."
        ),
        4_000_021: Entry(
            name: "InvalidSortError",
            httpStatus: 400,
            summary: "An error that indicates an invalid sort parameter."
        ),
        4_000_022: Entry(
            name: "InvalidProductTypeError",
            httpStatus: 400,
            summary: "An error that indicates an invalid product type parameter."
        ),
        4_000_023: Entry(
            name: "InvalidProductIdError",
            httpStatus: 400,
            summary: "An error that indicates the product ID parameter is invalid."
        ),
        4_000_024: Entry(
            name: "InvalidSubscriptionGroupIdentifierError",
            httpStatus: 400,
            summary: "An error that indicates an invalid subscription group identifier."
        ),
        4_000_025: Entry(
            name: "InvalidExcludeRevokedError",
            httpStatus: 400,
            summary: "An error that indicates the query parameter exclude-revoked is invalid."
        ),
        4_000_026: Entry(
            name: "InvalidInAppOwnershipTypeError",
            httpStatus: 400,
            summary: "An error that indicates an invalid in-app ownership type parameter."
        ),
        4_000_027: Entry(
            name: "InvalidEmptyStorefrontCountryCodeListError",
            httpStatus: 400,
            summary: "An error that indicates a required storefront country code is empty."
        ),
        4_000_028: Entry(
            name: "InvalidStorefrontCountryCodeError",
            httpStatus: 400,
            summary: "An error that indicates a storefront code is invalid."
        ),
        4_000_030: Entry(
            name: "InvalidRevokedError",
            httpStatus: 400,
            summary: "An error that indicates the revoked parameter contains an invalid value."
        ),
        4_000_031: Entry(
            name: "InvalidStatusError",
            httpStatus: 400,
            summary: "An error that indicates the status parameter is invalid."
        ),
        4_000_032: Entry(
            name: "InvalidAccountTenureError",
            httpStatus: 400,
            summary: "An error that indicates the value of the account tenure field is invalid."
        ),
        4_000_033: Entry(
            name: "InvalidAppAccountTokenError",
            httpStatus: 400,
            summary: "An error that indicates the value of the app account token field is invalid."
        ),
        4_000_034: Entry(
            name: "InvalidConsumptionStatusError",
            httpStatus: 400,
            summary: "An error that indicates the value of the consumption status field is invalid."
        ),
        4_000_035: Entry(
            name: "InvalidCustomerConsentedError",
            httpStatus: 400,
            summary:
                "An error that indicates the customer consented field is invalid or doesn't indicate that the customer consented."
        ),
        4_000_036: Entry(
            name: "InvalidDeliveryStatusError",
            httpStatus: 400,
            summary: "An error that indicates the value in the delivery status field is invalid."
        ),
        4_000_037: Entry(
            name: "InvalidLifetimeDollarsPurchasedError",
            httpStatus: 400,
            summary: "An error that indicates the value in the lifetime dollars purchased field is invalid."
        ),
        4_000_038: Entry(
            name: "InvalidLifetimeDollarsRefundedError",
            httpStatus: 400,
            summary: "An error that indicates the value in the lifetime dollars refunded field is invalid."
        ),
        4_000_039: Entry(
            name: "InvalidPlatformError",
            httpStatus: 400,
            summary: "An error that indicates the value in the platform field is invalid."
        ),
        4_000_040: Entry(
            name: "InvalidPlayTimeError",
            httpStatus: 400,
            summary: "An error that indicates the value in the playtime field is invalid."
        ),
        4_000_041: Entry(
            name: "InvalidSampleContentProvidedError",
            httpStatus: 400,
            summary: "An error that indicates the value in the sample content provided field is invalid."
        ),
        4_000_042: Entry(
            name: "InvalidUserStatusError",
            httpStatus: 400,
            summary: "An error that indicates the value in the user status field is invalid."
        ),
        4_000_043: Entry(
            name: "InvalidTransactionNotConsumableError",
            httpStatus: 400,
            summary:
                "An error that indicates the transaction identifier doesn't represent a consumable in-app purchase. (deprecated)"
        ),
        4_000_047: Entry(
            name: "InvalidTransactionTypeNotSupportedError",
            httpStatus: 400,
            summary:
                "An error that indicates the transaction identifier represents an unsupported in-app purchase type."
        ),
        4_000_048: Entry(
            name: "AppTransactionIdNotSupportedError",
            httpStatus: 400,
            summary: "An error that indicates the endpoint doesn't support an app transaction ID."
        ),
        4_000_161: Entry(
            name: "InvalidImageError",
            httpStatus: 400,
            summary: "An error that indicates the image that's uploading is invalid."
        ),
        4_000_162: Entry(
            name: "HeaderTooLongError",
            httpStatus: 400,
            summary: "An error that indicates the header text is too long."
        ),
        4_000_163: Entry(
            name: "BodyTooLongError",
            httpStatus: 400,
            summary: "An error that indicates the body text is too long."
        ),
        4_000_164: Entry(
            name: "InvalidLocaleError",
            httpStatus: 400,
            summary: "An error that indicates the locale is invalid."
        ),
        4_000_175: Entry(
            name: "AltTextTooLongError",
            httpStatus: 400,
            summary: "An error that indicates the alternative text for an image is too long."
        ),
        4_000_183: Entry(
            name: "InvalidAppAccountTokenUUIDError",
            httpStatus: 400,
            summary: "An error that indicates the app account token value is not a valid UUID."
        ),
        4_000_185: Entry(
            name: "FamilyTransactionNotSupportedError",
            httpStatus: 400,
            summary:
                "An error that indicates the transaction is for a product the customer obtains through Family Sharing, which the endpoint doesn't support."
        ),
        4_000_187: Entry(
            name: "TransactionIdIsNotOriginalTransactionIdError",
            httpStatus: 400,
            summary: "An error that indicates the endpoint expects an original transaction identifier."
        ),
        4_000_211: Entry(
            name: "InvalidPerformanceTestRequestError",
            httpStatus: 400,
            summary: "An error the API returns that indicates the performance test request is invalid."
        ),
        4_000_212: Entry(
            name: "InvalidRequestIdError",
            httpStatus: 400,
            summary: "An error that indicates the request ID is invalid."
        ),
        4_000_213: Entry(
            name: "ExistingPerformanceTestRunError",
            httpStatus: 400,
            summary: "An error that indicates an error with an existing test."
        ),
        4_000_215: Entry(
            name: "BadRequestRealtimeUrlError",
            httpStatus: 400,
            summary: "An error that indicates the URL is invalid."
        ),
        4_000_216: Entry(
            name: "BadRequestImageSizeError",
            httpStatus: 400,
            summary: "An error that indicates the image size provided is invalid."
        ),
        4_000_218: Entry(
            name: "BadRequestTooManyBulletPointsError",
            httpStatus: 400,
            summary: "An error that indicates there are too many bullet points."
        ),
        4_000_219: Entry(
            name: "BadRequestBulletPointTextTooLongError",
            httpStatus: 400,
            summary: "An error that indicates the text for a bullet point is too long."
        ),
        4_000_224: Entry(
            name: "BadRequestAboveImageRequiresAnImageError",
            httpStatus: 400,
            summary:
                "An error that indicates that no image object is included, but the request indicates that the header should be placed above the image."
        ),
        4_030_004: Entry(
            name: "SubscriptionExtensionIneligibleError",
            httpStatus: 403,
            summary:
                "An error that indicates the subscription doesn't qualify for a renewal-date extension due to its subscription state."
        ),
        4_030_005: Entry(
            name: "SubscriptionMaxExtensionError",
            httpStatus: 403,
            summary:
                "An error that indicates the subscription doesn't qualify for a renewal-date extension because it has already received the maximum extensions."
        ),
        4_030_007: Entry(
            name: "FamilySharedSubscriptionExtensionIneligibleError",
            httpStatus: 403,
            summary:
                "An error that indicates a subscription isn't directly eligible for a renewal date extension because the user obtained it through Family Sharing."
        ),
        4_030_014: Entry(
            name: "MaximumNumberOfImagesReachedError",
            httpStatus: 403,
            summary: "An error that indicates when you reach the maximum number of uploaded images."
        ),
        4_030_016: Entry(
            name: "MaximumNumberOfMessagesReachedError",
            httpStatus: 403,
            summary: "An error that indicates when you reach the maximum number of uploaded messages."
        ),
        4_030_017: Entry(
            name: "MessageNotApprovedError",
            httpStatus: 403,
            summary:
                "An error that indicates the message isn't in the approved state, so you can't configure it as a default message."
        ),
        4_030_018: Entry(
            name: "ImageNotApprovedError",
            httpStatus: 403,
            summary:
                "An error that indicates the image isn't in the approved state, so you can't configure it as part of a default message."
        ),
        4_030_019: Entry(
            name: "ImageInUseError",
            httpStatus: 403,
            summary:
                "An error that indicates the image is currently in use as part of a message, so you can't delete it."
        ),
        4_030_026: Entry(
            name: "ForbiddenNoPassingTestError",
            httpStatus: 403,
            summary:
                "An error that indicates that passing a performance test is required before you can set a URL for the production environment."
        ),
        4_040_001: Entry(
            name: "AccountNotFoundError",
            httpStatus: 404,
            summary: "An error that indicates the App Store account wasn't found."
        ),
        4_040_002: Entry(
            name: "AccountNotFoundRetryableError",
            httpStatus: 404,
            summary: "An error response that indicates the App Store account wasn't found, but you can try again."
        ),
        4_040_003: Entry(
            name: "AppNotFoundError",
            httpStatus: 404,
            summary: "An error that indicates the app wasn't found."
        ),
        4_040_004: Entry(
            name: "AppNotFoundRetryableError",
            httpStatus: 404,
            summary: "An error response that indicates the app wasn't found, but you can try again."
        ),
        4_040_005: Entry(
            name: "OriginalTransactionIdNotFoundError",
            httpStatus: 404,
            summary: "An error that indicates an original transaction identifier wasn't found."
        ),
        4_040_006: Entry(
            name: "OriginalTransactionIdNotFoundRetryableError",
            httpStatus: 404,
            summary:
                "An error response that indicates the original transaction identifier wasn't found, but you can try again."
        ),
        4_040_007: Entry(
            name: "ServerNotificationUrlNotFoundError",
            httpStatus: 404,
            summary:
                "An error that indicates that the App Store server couldn't find a notifications URL for your app in this environment."
        ),
        4_040_008: Entry(
            name: "TestNotificationNotFoundError",
            httpStatus: 404,
            summary:
                "An error that indicates that the test notification token is expired or the test notification status isn't available."
        ),
        4_040_009: Entry(
            name: "StatusRequestNotFoundError",
            httpStatus: 404,
            summary:
                "An error that indicates the server didn't find a subscription-renewal-date extension request for the request identifier and product identifier you provided."
        ),
        4_040_010: Entry(
            name: "TransactionIdNotFoundError",
            httpStatus: 404,
            summary: "An error that indicates a transaction identifier wasn't found."
        ),
        4_040_014: Entry(
            name: "ImageNotFoundError",
            httpStatus: 404,
            summary: "An error that indicates the system can't find the image identifier."
        ),
        4_040_015: Entry(
            name: "MessageNotFoundError",
            httpStatus: 404,
            summary: "An error that indicates the system can't find the message identifier."
        ),
        4_040_018: Entry(
            name: "PerformanceTestRunNotFoundError",
            httpStatus: 404,
            summary: "An error the API returns if the service can't find the specified test run."
        ),
        4_040_019: Entry(
            name: "AppTransactionDoesNotExistError",
            httpStatus: 404,
            summary: "An error response that indicates an app transaction doesn't exist for the specified customer."
        ),
        4_040_020: Entry(
            name: "DefaultMessageNotFoundError",
            httpStatus: 404,
            summary: "An error that indicates a default message isn't configured."
        ),
        4_040_021: Entry(
            name: "RealtimeUrlNotFoundError",
            httpStatus: 404,
            summary: "An error that indicates that the URL for your endpoint isn't configured."
        ),
        4_090_000: Entry(
            name: "ImageAlreadyExistsError",
            httpStatus: 409,
            summary: "An error that indicates the image identifier already exists."
        ),
        4_090_001: Entry(
            name: "MessageAlreadyExistsError",
            httpStatus: 409,
            summary: "An error that indicates the message identifier already exists."
        ),
        4_290_000: Entry(
            name: "RateLimitExceededError",
            httpStatus: 429,
            summary: "An error that indicates that the request exceeded the rate limit."
        ),
        5_000_000: Entry(
            name: "GeneralInternalError",
            httpStatus: 500,
            summary: "An error that indicates a general internal error."
        ),
        5_000_001: Entry(
            name: "GeneralInternalRetryableError",
            httpStatus: 500,
            summary: "An error response that indicates an unknown error occurred, but you can try again."
        ),
    ]
}
