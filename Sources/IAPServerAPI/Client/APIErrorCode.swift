public import IAPCore
/// A numeric error code of the App Store Server API: the `errorCode` of an error response body.
///
/// Mirrors Apple's `APIError` with all 87 documented codes, spelled as Apple's libraries spell them
/// (`transactionIdNotFound` is `4040010`, `TransactionIdNotFoundError`). ``name`` gives Apple's name,
/// ``httpStatus`` the HTTP status Apple documents with it and ``isRetryable`` whether the same request can
/// succeed when tried again.
///
/// The set is open: a code Apple adds later decodes, compares and re-encodes unchanged, and
/// `isKnown` is `false` for it. Never `switch` exhaustively over the known values.
public struct APIErrorCode: OpenEnumeration {
    /// The value as it appears on the wire.
    public let rawValue: Int64

    /// Creates a value from its wire form, known or not.
    public init(rawValue: Int64) {
        self.rawValue = rawValue
    }

    /// `4000000` `GeneralBadRequestError` (HTTP 400): an error that indicates an invalid request.
    public static let generalBadRequest = APIErrorCode(rawValue: 4_000_000)

    /// `4000002` `InvalidAppIdentifierError` (HTTP 400): an error that indicates an invalid app identifier.
    public static let invalidAppIdentifier = APIErrorCode(rawValue: 4_000_002)

    /// `4000005` `InvalidRequestRevisionError` (HTTP 400): an error that indicates an invalid request revision.
    public static let invalidRequestRevision = APIErrorCode(rawValue: 4_000_005)

    /// `4000006` `InvalidTransactionIdError` (HTTP 400): an error that indicates an invalid transaction identifier.
    public static let invalidTransactionId = APIErrorCode(rawValue: 4_000_006)

    /// `4000008` `InvalidOriginalTransactionIdError` (HTTP 400): an error that indicates an invalid original
    /// transaction identifier.
    public static let invalidOriginalTransactionId = APIErrorCode(rawValue: 4_000_008)

    /// `4000009` `InvalidExtendByDaysError` (HTTP 400): an error that indicates an invalid extend-by-days value.
    public static let invalidExtendByDays = APIErrorCode(rawValue: 4_000_009)

    /// `4000010` `InvalidExtendReasonCodeError` (HTTP 400): an error that indicates an invalid reason code.
    public static let invalidExtendReasonCode = APIErrorCode(rawValue: 4_000_010)

    /// `4000011` `InvalidRequestIdentifierError` (HTTP 400): an error that indicates an invalid request identifier.
    public static let invalidRequestIdentifier = APIErrorCode(rawValue: 4_000_011)

    /// `4000012` `StartDateTooFarInPastError` (HTTP 400): an error that indicates that the start date is earlier than
    /// the earliest allowed date.
    public static let startDateTooFarInPast = APIErrorCode(rawValue: 4_000_012)

    /// `4000013` `StartDateAfterEndDateError` (HTTP 400): an error that indicates that the end date precedes the
    /// start date, or the two dates are equal.
    public static let startDateAfterEndDate = APIErrorCode(rawValue: 4_000_013)

    /// `4000014` `InvalidPaginationTokenError` (HTTP 400): an error that indicates the pagination token is invalid.
    public static let invalidPaginationToken = APIErrorCode(rawValue: 4_000_014)

    /// `4000015` `InvalidStartDateError` (HTTP 400): an error that indicates the start date is invalid.
    public static let invalidStartDate = APIErrorCode(rawValue: 4_000_015)

    /// `4000016` `InvalidEndDateError` (HTTP 400): an error that indicates the end date is invalid.
    public static let invalidEndDate = APIErrorCode(rawValue: 4_000_016)

    /// `4000017` `PaginationTokenExpiredError` (HTTP 400): an error that indicates the pagination token expired.
    public static let paginationTokenExpired = APIErrorCode(rawValue: 4_000_017)

    /// `4000018` `InvalidNotificationTypeError` (HTTP 400): an error that indicates the notification type or subtype
    /// is invalid.
    public static let invalidNotificationType = APIErrorCode(rawValue: 4_000_018)

    /// `4000019` `MultipleFiltersSuppliedError` (HTTP 400): an error that indicates the request is invalid because it
    /// has too many constraints applied.
    public static let multipleFiltersSupplied = APIErrorCode(rawValue: 4_000_019)

    /// `4000020` `InvalidTestNotificationTokenError` (HTTP 400): an error that indicates the test notification token
    /// is invalid.
    public static let invalidTestNotificationToken = APIErrorCode(rawValue: 4_000_020)

    /// `4000021` `InvalidSortError` (HTTP 400): an error that indicates an invalid sort parameter.
    public static let invalidSort = APIErrorCode(rawValue: 4_000_021)

    /// `4000022` `InvalidProductTypeError` (HTTP 400): an error that indicates an invalid product type parameter.
    public static let invalidProductType = APIErrorCode(rawValue: 4_000_022)

    /// `4000023` `InvalidProductIdError` (HTTP 400): an error that indicates the product ID parameter is invalid.
    public static let invalidProductId = APIErrorCode(rawValue: 4_000_023)

    /// `4000024` `InvalidSubscriptionGroupIdentifierError` (HTTP 400): an error that indicates an invalid
    /// subscription group identifier.
    public static let invalidSubscriptionGroupIdentifier = APIErrorCode(rawValue: 4_000_024)

    /// `4000025` `InvalidExcludeRevokedError` (HTTP 400): an error that indicates the query parameter exclude-revoked
    /// is invalid.
    public static let invalidExcludeRevoked = APIErrorCode(rawValue: 4_000_025)

    /// `4000026` `InvalidInAppOwnershipTypeError` (HTTP 400): an error that indicates an invalid in-app ownership
    /// type parameter.
    public static let invalidInAppOwnershipType = APIErrorCode(rawValue: 4_000_026)

    /// `4000027` `InvalidEmptyStorefrontCountryCodeListError` (HTTP 400): an error that indicates a required
    /// storefront country code is empty.
    public static let invalidEmptyStorefrontCountryCodeList = APIErrorCode(rawValue: 4_000_027)

    /// `4000028` `InvalidStorefrontCountryCodeError` (HTTP 400): an error that indicates a storefront code is
    /// invalid.
    public static let invalidStorefrontCountryCode = APIErrorCode(rawValue: 4_000_028)

    /// `4000030` `InvalidRevokedError` (HTTP 400): an error that indicates the revoked parameter contains an invalid
    /// value.
    public static let invalidRevoked = APIErrorCode(rawValue: 4_000_030)

    /// `4000031` `InvalidStatusError` (HTTP 400): an error that indicates the status parameter is invalid.
    public static let invalidStatus = APIErrorCode(rawValue: 4_000_031)

    /// `4000032` `InvalidAccountTenureError` (HTTP 400): an error that indicates the value of the account tenure
    /// field is invalid.
    public static let invalidAccountTenure = APIErrorCode(rawValue: 4_000_032)

    /// `4000033` `InvalidAppAccountTokenError` (HTTP 400): an error that indicates the value of the app account token
    /// field is invalid.
    public static let invalidAppAccountToken = APIErrorCode(rawValue: 4_000_033)

    /// `4000034` `InvalidConsumptionStatusError` (HTTP 400): an error that indicates the value of the consumption
    /// status field is invalid.
    public static let invalidConsumptionStatus = APIErrorCode(rawValue: 4_000_034)

    /// `4000035` `InvalidCustomerConsentedError` (HTTP 400): an error that indicates the customer consented field is
    /// invalid or doesn't indicate that the customer consented.
    public static let invalidCustomerConsented = APIErrorCode(rawValue: 4_000_035)

    /// `4000036` `InvalidDeliveryStatusError` (HTTP 400): an error that indicates the value in the delivery status
    /// field is invalid.
    public static let invalidDeliveryStatus = APIErrorCode(rawValue: 4_000_036)

    /// `4000037` `InvalidLifetimeDollarsPurchasedError` (HTTP 400): an error that indicates the value in the lifetime
    /// dollars purchased field is invalid.
    public static let invalidLifetimeDollarsPurchased = APIErrorCode(rawValue: 4_000_037)

    /// `4000038` `InvalidLifetimeDollarsRefundedError` (HTTP 400): an error that indicates the value in the lifetime
    /// dollars refunded field is invalid.
    public static let invalidLifetimeDollarsRefunded = APIErrorCode(rawValue: 4_000_038)

    /// `4000039` `InvalidPlatformError` (HTTP 400): an error that indicates the value in the platform field is
    /// invalid.
    public static let invalidPlatform = APIErrorCode(rawValue: 4_000_039)

    /// `4000040` `InvalidPlayTimeError` (HTTP 400): an error that indicates the value in the playtime field is
    /// invalid.
    public static let invalidPlayTime = APIErrorCode(rawValue: 4_000_040)

    /// `4000041` `InvalidSampleContentProvidedError` (HTTP 400): an error that indicates the value in the sample
    /// content provided field is invalid.
    public static let invalidSampleContentProvided = APIErrorCode(rawValue: 4_000_041)

    /// `4000042` `InvalidUserStatusError` (HTTP 400): an error that indicates the value in the user status field is
    /// invalid.
    public static let invalidUserStatus = APIErrorCode(rawValue: 4_000_042)

    /// `4000043` `InvalidTransactionNotConsumableError` (HTTP 400): an error that indicates the transaction
    /// identifier doesn't represent a consumable in-app purchase. (deprecated).
    public static let invalidTransactionNotConsumable = APIErrorCode(rawValue: 4_000_043)

    /// `4000047` `InvalidTransactionTypeNotSupportedError` (HTTP 400): an error that indicates the transaction
    /// identifier represents an unsupported in-app purchase type.
    public static let invalidTransactionTypeNotSupported = APIErrorCode(rawValue: 4_000_047)

    /// `4000048` `AppTransactionIdNotSupportedError` (HTTP 400): an error that indicates the endpoint doesn't support
    /// an app transaction ID.
    public static let appTransactionIdNotSupported = APIErrorCode(rawValue: 4_000_048)

    /// `4000161` `InvalidImageError` (HTTP 400): an error that indicates the image that's uploading is invalid.
    public static let invalidImage = APIErrorCode(rawValue: 4_000_161)

    /// `4000162` `HeaderTooLongError` (HTTP 400): an error that indicates the header text is too long.
    public static let headerTooLong = APIErrorCode(rawValue: 4_000_162)

    /// `4000163` `BodyTooLongError` (HTTP 400): an error that indicates the body text is too long.
    public static let bodyTooLong = APIErrorCode(rawValue: 4_000_163)

    /// `4000164` `InvalidLocaleError` (HTTP 400): an error that indicates the locale is invalid.
    public static let invalidLocale = APIErrorCode(rawValue: 4_000_164)

    /// `4000175` `AltTextTooLongError` (HTTP 400): an error that indicates the alternative text for an image is too
    /// long.
    public static let altTextTooLong = APIErrorCode(rawValue: 4_000_175)

    /// `4000183` `InvalidAppAccountTokenUUIDError` (HTTP 400): an error that indicates the app account token value is
    /// not a valid UUID.
    public static let invalidAppAccountTokenUUID = APIErrorCode(rawValue: 4_000_183)

    /// `4000185` `FamilyTransactionNotSupportedError` (HTTP 400): an error that indicates the transaction is for a
    /// product the customer obtains through Family Sharing, which the endpoint doesn't support.
    public static let familyTransactionNotSupported = APIErrorCode(rawValue: 4_000_185)

    /// `4000187` `TransactionIdIsNotOriginalTransactionIdError` (HTTP 400): an error that indicates the endpoint
    /// expects an original transaction identifier.
    public static let transactionIdNotOriginalTransactionId = APIErrorCode(rawValue: 4_000_187)

    /// `4000211` `InvalidPerformanceTestRequestError` (HTTP 400): an error the API returns that indicates the
    /// performance test request is invalid.
    public static let invalidPerformanceTestRequest = APIErrorCode(rawValue: 4_000_211)

    /// `4000212` `InvalidRequestIdError` (HTTP 400): an error that indicates the request ID is invalid.
    public static let invalidRequestId = APIErrorCode(rawValue: 4_000_212)

    /// `4000213` `ExistingPerformanceTestRunError` (HTTP 400): an error that indicates an error with an existing
    /// test.
    public static let existingPerformanceTestRun = APIErrorCode(rawValue: 4_000_213)

    /// `4000215` `BadRequestRealtimeUrlError` (HTTP 400): an error that indicates the URL is invalid.
    public static let badRequestRealtimeUrl = APIErrorCode(rawValue: 4_000_215)

    /// `4000216` `BadRequestImageSizeError` (HTTP 400): an error that indicates the image size provided is invalid.
    public static let badRequestImageSize = APIErrorCode(rawValue: 4_000_216)

    /// `4000218` `BadRequestTooManyBulletPointsError` (HTTP 400): an error that indicates there are too many bullet
    /// points.
    public static let badRequestTooManyBulletPoints = APIErrorCode(rawValue: 4_000_218)

    /// `4000219` `BadRequestBulletPointTextTooLongError` (HTTP 400): an error that indicates the text for a bullet
    /// point is too long.
    public static let badRequestBulletPointTextTooLong = APIErrorCode(rawValue: 4_000_219)

    /// `4000224` `BadRequestAboveImageRequiresAnImageError` (HTTP 400): an error that indicates that no image object
    /// is included, but the request indicates that the header should be placed above the image.
    public static let badRequestAboveImageRequiresAnImage = APIErrorCode(rawValue: 4_000_224)

    /// `4030004` `SubscriptionExtensionIneligibleError` (HTTP 403): an error that indicates the subscription doesn't
    /// qualify for a renewal-date extension due to its subscription state.
    public static let subscriptionExtensionIneligible = APIErrorCode(rawValue: 4_030_004)

    /// `4030005` `SubscriptionMaxExtensionError` (HTTP 403): an error that indicates the subscription doesn't qualify
    /// for a renewal-date extension because it has already received the maximum extensions.
    public static let subscriptionMaxExtension = APIErrorCode(rawValue: 4_030_005)

    /// `4030007` `FamilySharedSubscriptionExtensionIneligibleError` (HTTP 403): an error that indicates a
    /// subscription isn't directly eligible for a renewal date extension because the user obtained it through Family
    /// Sharing.
    public static let familySharedSubscriptionExtensionIneligible = APIErrorCode(rawValue: 4_030_007)

    /// `4030014` `MaximumNumberOfImagesReachedError` (HTTP 403): an error that indicates when you reach the maximum
    /// number of uploaded images.
    public static let maximumNumberOfImagesReached = APIErrorCode(rawValue: 4_030_014)

    /// `4030016` `MaximumNumberOfMessagesReachedError` (HTTP 403): an error that indicates when you reach the maximum
    /// number of uploaded messages.
    public static let maximumNumberOfMessagesReached = APIErrorCode(rawValue: 4_030_016)

    /// `4030017` `MessageNotApprovedError` (HTTP 403): an error that indicates the message isn't in the approved
    /// state, so you can't configure it as a default message.
    public static let messageNotApproved = APIErrorCode(rawValue: 4_030_017)

    /// `4030018` `ImageNotApprovedError` (HTTP 403): an error that indicates the image isn't in the approved state,
    /// so you can't configure it as part of a default message.
    public static let imageNotApproved = APIErrorCode(rawValue: 4_030_018)

    /// `4030019` `ImageInUseError` (HTTP 403): an error that indicates the image is currently in use as part of a
    /// message, so you can't delete it.
    public static let imageInUse = APIErrorCode(rawValue: 4_030_019)

    /// `4030026` `ForbiddenNoPassingTestError` (HTTP 403): an error that indicates that passing a performance test is
    /// required before you can set a URL for the production environment.
    public static let forbiddenNoPassingTest = APIErrorCode(rawValue: 4_030_026)

    /// `4040001` `AccountNotFoundError` (HTTP 404): an error that indicates the App Store account wasn't found.
    public static let accountNotFound = APIErrorCode(rawValue: 4_040_001)

    /// `4040002` `AccountNotFoundRetryableError` (HTTP 404): an error response that indicates the App Store account
    /// wasn't found, but you can try again.
    public static let accountNotFoundRetryable = APIErrorCode(rawValue: 4_040_002)

    /// `4040003` `AppNotFoundError` (HTTP 404): an error that indicates the app wasn't found.
    public static let appNotFound = APIErrorCode(rawValue: 4_040_003)

    /// `4040004` `AppNotFoundRetryableError` (HTTP 404): an error response that indicates the app wasn't found, but
    /// you can try again.
    public static let appNotFoundRetryable = APIErrorCode(rawValue: 4_040_004)

    /// `4040005` `OriginalTransactionIdNotFoundError` (HTTP 404): an error that indicates an original transaction
    /// identifier wasn't found.
    public static let originalTransactionIdNotFound = APIErrorCode(rawValue: 4_040_005)

    /// `4040006` `OriginalTransactionIdNotFoundRetryableError` (HTTP 404): an error response that indicates the
    /// original transaction identifier wasn't found, but you can try again.
    public static let originalTransactionIdNotFoundRetryable = APIErrorCode(rawValue: 4_040_006)

    /// `4040007` `ServerNotificationUrlNotFoundError` (HTTP 404): an error that indicates that the App Store server
    /// couldn't find a notifications URL for your app in this environment.
    public static let serverNotificationUrlNotFound = APIErrorCode(rawValue: 4_040_007)

    /// `4040008` `TestNotificationNotFoundError` (HTTP 404): an error that indicates that the test notification token
    /// is expired or the test notification status isn't available.
    public static let testNotificationNotFound = APIErrorCode(rawValue: 4_040_008)

    /// `4040009` `StatusRequestNotFoundError` (HTTP 404): an error that indicates the server didn't find a
    /// subscription-renewal-date extension request for the request identifier and product identifier you provided.
    public static let statusRequestNotFound = APIErrorCode(rawValue: 4_040_009)

    /// `4040010` `TransactionIdNotFoundError` (HTTP 404): an error that indicates a transaction identifier wasn't
    /// found.
    public static let transactionIdNotFound = APIErrorCode(rawValue: 4_040_010)

    /// `4040014` `ImageNotFoundError` (HTTP 404): an error that indicates the system can't find the image identifier.
    public static let imageNotFound = APIErrorCode(rawValue: 4_040_014)

    /// `4040015` `MessageNotFoundError` (HTTP 404): an error that indicates the system can't find the message
    /// identifier.
    public static let messageNotFound = APIErrorCode(rawValue: 4_040_015)

    /// `4040018` `PerformanceTestRunNotFoundError` (HTTP 404): an error the API returns if the service can't find the
    /// specified test run.
    public static let performanceTestRunNotFound = APIErrorCode(rawValue: 4_040_018)

    /// `4040019` `AppTransactionDoesNotExistError` (HTTP 404): an error response that indicates an app transaction
    /// doesn't exist for the specified customer.
    public static let appTransactionDoesNotExist = APIErrorCode(rawValue: 4_040_019)

    /// `4040020` `DefaultMessageNotFoundError` (HTTP 404): an error that indicates a default message isn't
    /// configured.
    public static let defaultMessageNotFound = APIErrorCode(rawValue: 4_040_020)

    /// `4040021` `RealtimeUrlNotFoundError` (HTTP 404): an error that indicates that the URL for your endpoint isn't
    /// configured.
    public static let realtimeUrlNotFound = APIErrorCode(rawValue: 4_040_021)

    /// `4090000` `ImageAlreadyExistsError` (HTTP 409): an error that indicates the image identifier already exists.
    public static let imageAlreadyExists = APIErrorCode(rawValue: 4_090_000)

    /// `4090001` `MessageAlreadyExistsError` (HTTP 409): an error that indicates the message identifier already
    /// exists.
    public static let messageAlreadyExists = APIErrorCode(rawValue: 4_090_001)

    /// `4290000` `RateLimitExceededError` (HTTP 429): an error that indicates that the request exceeded the rate
    /// limit.
    public static let rateLimitExceeded = APIErrorCode(rawValue: 4_290_000)

    /// `5000000` `GeneralInternalError` (HTTP 500): an error that indicates a general internal error.
    public static let generalInternal = APIErrorCode(rawValue: 5_000_000)

    /// `5000001` `GeneralInternalRetryableError` (HTTP 500): an error response that indicates an unknown error
    /// occurred, but you can try again.
    public static let generalInternalRetryable = APIErrorCode(rawValue: 5_000_001)

    /// Every value this version of swift-iap knows, in Apple's documented order.
    public static let allKnown: [APIErrorCode] = [
        .generalBadRequest,
        .invalidAppIdentifier,
        .invalidRequestRevision,
        .invalidTransactionId,
        .invalidOriginalTransactionId,
        .invalidExtendByDays,
        .invalidExtendReasonCode,
        .invalidRequestIdentifier,
        .startDateTooFarInPast,
        .startDateAfterEndDate,
        .invalidPaginationToken,
        .invalidStartDate,
        .invalidEndDate,
        .paginationTokenExpired,
        .invalidNotificationType,
        .multipleFiltersSupplied,
        .invalidTestNotificationToken,
        .invalidSort,
        .invalidProductType,
        .invalidProductId,
        .invalidSubscriptionGroupIdentifier,
        .invalidExcludeRevoked,
        .invalidInAppOwnershipType,
        .invalidEmptyStorefrontCountryCodeList,
        .invalidStorefrontCountryCode,
        .invalidRevoked,
        .invalidStatus,
        .invalidAccountTenure,
        .invalidAppAccountToken,
        .invalidConsumptionStatus,
        .invalidCustomerConsented,
        .invalidDeliveryStatus,
        .invalidLifetimeDollarsPurchased,
        .invalidLifetimeDollarsRefunded,
        .invalidPlatform,
        .invalidPlayTime,
        .invalidSampleContentProvided,
        .invalidUserStatus,
        .invalidTransactionNotConsumable,
        .invalidTransactionTypeNotSupported,
        .appTransactionIdNotSupported,
        .invalidImage,
        .headerTooLong,
        .bodyTooLong,
        .invalidLocale,
        .altTextTooLong,
        .invalidAppAccountTokenUUID,
        .familyTransactionNotSupported,
        .transactionIdNotOriginalTransactionId,
        .invalidPerformanceTestRequest,
        .invalidRequestId,
        .existingPerformanceTestRun,
        .badRequestRealtimeUrl,
        .badRequestImageSize,
        .badRequestTooManyBulletPoints,
        .badRequestBulletPointTextTooLong,
        .badRequestAboveImageRequiresAnImage,
        .subscriptionExtensionIneligible,
        .subscriptionMaxExtension,
        .familySharedSubscriptionExtensionIneligible,
        .maximumNumberOfImagesReached,
        .maximumNumberOfMessagesReached,
        .messageNotApproved,
        .imageNotApproved,
        .imageInUse,
        .forbiddenNoPassingTest,
        .accountNotFound,
        .accountNotFoundRetryable,
        .appNotFound,
        .appNotFoundRetryable,
        .originalTransactionIdNotFound,
        .originalTransactionIdNotFoundRetryable,
        .serverNotificationUrlNotFound,
        .testNotificationNotFound,
        .statusRequestNotFound,
        .transactionIdNotFound,
        .imageNotFound,
        .messageNotFound,
        .performanceTestRunNotFound,
        .appTransactionDoesNotExist,
        .defaultMessageNotFound,
        .realtimeUrlNotFound,
        .imageAlreadyExists,
        .messageAlreadyExists,
        .rateLimitExceeded,
        .generalInternal,
        .generalInternalRetryable,
    ]
}
