// swift-format-ignore-file
// Apple's table of App Store Server API error codes, one line per code: the value, Apple's name (the HTTP status
// is the value's first three digits) and Apple's summary; `retryable` marks the codes Apple documents as worth
// another try. Wider than the house's 120 columns on purpose, so that each code stays on one line.

extension APIErrorCode {
    // MARK: 400 Bad Request
    public static let generalBadRequest = Self(4_000_000, "GeneralBadRequestError", "An error that indicates an invalid request.")
    public static let invalidAppIdentifier = Self(4_000_002, "InvalidAppIdentifierError", "An error that indicates an invalid app identifier.")
    public static let invalidRequestRevision = Self(4_000_005, "InvalidRequestRevisionError", "An error that indicates an invalid request revision.")
    public static let invalidTransactionId = Self(4_000_006, "InvalidTransactionIdError", "An error that indicates an invalid transaction identifier.")
    public static let invalidOriginalTransactionId = Self(4_000_008, "InvalidOriginalTransactionIdError", "An error that indicates an invalid original transaction identifier.")
    public static let invalidExtendByDays = Self(4_000_009, "InvalidExtendByDaysError", "An error that indicates an invalid extend-by-days value.")
    public static let invalidExtendReasonCode = Self(4_000_010, "InvalidExtendReasonCodeError", "An error that indicates an invalid reason code.")
    public static let invalidRequestIdentifier = Self(4_000_011, "InvalidRequestIdentifierError", "An error that indicates an invalid request identifier.")
    public static let startDateTooFarInPast = Self(4_000_012, "StartDateTooFarInPastError", "An error that indicates that the start date is earlier than the earliest allowed date.")
    public static let startDateAfterEndDate = Self(4_000_013, "StartDateAfterEndDateError", "An error that indicates that the end date precedes the start date, or the two dates are equal.")
    public static let invalidPaginationToken = Self(4_000_014, "InvalidPaginationTokenError", "An error that indicates the pagination token is invalid.")
    public static let invalidStartDate = Self(4_000_015, "InvalidStartDateError", "An error that indicates the start date is invalid.")
    public static let invalidEndDate = Self(4_000_016, "InvalidEndDateError", "An error that indicates the end date is invalid.")
    public static let paginationTokenExpired = Self(4_000_017, "PaginationTokenExpiredError", "An error that indicates the pagination token expired.")
    public static let invalidNotificationType = Self(4_000_018, "InvalidNotificationTypeError", "An error that indicates the notification type or subtype is invalid.")
    public static let multipleFiltersSupplied = Self(4_000_019, "MultipleFiltersSuppliedError", "An error that indicates the request is invalid because it has too many constraints applied.")
    public static let invalidTestNotificationToken = Self(4_000_020, "InvalidTestNotificationTokenError", "An error that indicates the test notification token is invalid.")
    public static let invalidSort = Self(4_000_021, "InvalidSortError", "An error that indicates an invalid sort parameter.")
    public static let invalidProductType = Self(4_000_022, "InvalidProductTypeError", "An error that indicates an invalid product type parameter.")
    public static let invalidProductId = Self(4_000_023, "InvalidProductIdError", "An error that indicates the product ID parameter is invalid.")
    public static let invalidSubscriptionGroupIdentifier = Self(4_000_024, "InvalidSubscriptionGroupIdentifierError", "An error that indicates an invalid subscription group identifier.")
    public static let invalidExcludeRevoked = Self(4_000_025, "InvalidExcludeRevokedError", "An error that indicates the query parameter exclude-revoked is invalid.")
    public static let invalidInAppOwnershipType = Self(4_000_026, "InvalidInAppOwnershipTypeError", "An error that indicates an invalid in-app ownership type parameter.")
    public static let invalidEmptyStorefrontCountryCodeList = Self(4_000_027, "InvalidEmptyStorefrontCountryCodeListError", "An error that indicates a required storefront country code is empty.")
    public static let invalidStorefrontCountryCode = Self(4_000_028, "InvalidStorefrontCountryCodeError", "An error that indicates a storefront code is invalid.")
    public static let invalidRevoked = Self(4_000_030, "InvalidRevokedError", "An error that indicates the revoked parameter contains an invalid value.")
    public static let invalidStatus = Self(4_000_031, "InvalidStatusError", "An error that indicates the status parameter is invalid.")
    public static let invalidAccountTenure = Self(4_000_032, "InvalidAccountTenureError", "An error that indicates the value of the account tenure field is invalid.")
    public static let invalidAppAccountToken = Self(4_000_033, "InvalidAppAccountTokenError", "An error that indicates the value of the app account token field is invalid.")
    public static let invalidConsumptionStatus = Self(4_000_034, "InvalidConsumptionStatusError", "An error that indicates the value of the consumption status field is invalid.")
    public static let invalidCustomerConsented = Self(4_000_035, "InvalidCustomerConsentedError", "An error that indicates the customer consented field is invalid or doesn't indicate that the customer consented.")
    public static let invalidDeliveryStatus = Self(4_000_036, "InvalidDeliveryStatusError", "An error that indicates the value in the delivery status field is invalid.")
    public static let invalidLifetimeDollarsPurchased = Self(4_000_037, "InvalidLifetimeDollarsPurchasedError", "An error that indicates the value in the lifetime dollars purchased field is invalid.")
    public static let invalidLifetimeDollarsRefunded = Self(4_000_038, "InvalidLifetimeDollarsRefundedError", "An error that indicates the value in the lifetime dollars refunded field is invalid.")
    public static let invalidPlatform = Self(4_000_039, "InvalidPlatformError", "An error that indicates the value in the platform field is invalid.")
    public static let invalidPlayTime = Self(4_000_040, "InvalidPlayTimeError", "An error that indicates the value in the playtime field is invalid.")
    public static let invalidSampleContentProvided = Self(4_000_041, "InvalidSampleContentProvidedError", "An error that indicates the value in the sample content provided field is invalid.")
    public static let invalidUserStatus = Self(4_000_042, "InvalidUserStatusError", "An error that indicates the value in the user status field is invalid.")
    public static let invalidTransactionNotConsumable = Self(4_000_043, "InvalidTransactionNotConsumableError", "An error that indicates the transaction identifier doesn't represent a consumable in-app purchase. (deprecated)")
    public static let invalidTransactionTypeNotSupported = Self(4_000_047, "InvalidTransactionTypeNotSupportedError", "An error that indicates the transaction identifier represents an unsupported in-app purchase type.")
    public static let appTransactionIdNotSupported = Self(4_000_048, "AppTransactionIdNotSupportedError", "An error that indicates the endpoint doesn't support an app transaction ID.")
    public static let invalidImage = Self(4_000_161, "InvalidImageError", "An error that indicates the image that's uploading is invalid.")
    public static let headerTooLong = Self(4_000_162, "HeaderTooLongError", "An error that indicates the header text is too long.")
    public static let bodyTooLong = Self(4_000_163, "BodyTooLongError", "An error that indicates the body text is too long.")
    public static let invalidLocale = Self(4_000_164, "InvalidLocaleError", "An error that indicates the locale is invalid.")
    public static let altTextTooLong = Self(4_000_175, "AltTextTooLongError", "An error that indicates the alternative text for an image is too long.")
    public static let invalidAppAccountTokenUUID = Self(4_000_183, "InvalidAppAccountTokenUUIDError", "An error that indicates the app account token value is not a valid UUID.")
    public static let familyTransactionNotSupported = Self(4_000_185, "FamilyTransactionNotSupportedError", "An error that indicates the transaction is for a product the customer obtains through Family Sharing, which the endpoint doesn't support.")
    public static let transactionIdNotOriginalTransactionId = Self(4_000_187, "TransactionIdIsNotOriginalTransactionIdError", "An error that indicates the endpoint expects an original transaction identifier.")
    public static let invalidPerformanceTestRequest = Self(4_000_211, "InvalidPerformanceTestRequestError", "An error the API returns that indicates the performance test request is invalid.")
    public static let invalidRequestId = Self(4_000_212, "InvalidRequestIdError", "An error that indicates the request ID is invalid.")
    public static let existingPerformanceTestRun = Self(4_000_213, "ExistingPerformanceTestRunError", "An error that indicates an error with an existing test.")
    public static let badRequestRealtimeUrl = Self(4_000_215, "BadRequestRealtimeUrlError", "An error that indicates the URL is invalid.")
    public static let badRequestImageSize = Self(4_000_216, "BadRequestImageSizeError", "An error that indicates the image size provided is invalid.")
    public static let badRequestTooManyBulletPoints = Self(4_000_218, "BadRequestTooManyBulletPointsError", "An error that indicates there are too many bullet points.")
    public static let badRequestBulletPointTextTooLong = Self(4_000_219, "BadRequestBulletPointTextTooLongError", "An error that indicates the text for a bullet point is too long.")
    public static let badRequestAboveImageRequiresAnImage = Self(4_000_224, "BadRequestAboveImageRequiresAnImageError", "An error that indicates that no image object is included, but the request indicates that the header should be placed above the image.")

    // MARK: 403 Forbidden
    public static let subscriptionExtensionIneligible = Self(4_030_004, "SubscriptionExtensionIneligibleError", "An error that indicates the subscription doesn't qualify for a renewal-date extension due to its subscription state.")
    public static let subscriptionMaxExtension = Self(4_030_005, "SubscriptionMaxExtensionError", "An error that indicates the subscription doesn't qualify for a renewal-date extension because it has already received the maximum extensions.")
    public static let familySharedSubscriptionExtensionIneligible = Self(4_030_007, "FamilySharedSubscriptionExtensionIneligibleError", "An error that indicates a subscription isn't directly eligible for a renewal date extension because the user obtained it through Family Sharing.")
    public static let maximumNumberOfImagesReached = Self(4_030_014, "MaximumNumberOfImagesReachedError", "An error that indicates when you reach the maximum number of uploaded images.")
    public static let maximumNumberOfMessagesReached = Self(4_030_016, "MaximumNumberOfMessagesReachedError", "An error that indicates when you reach the maximum number of uploaded messages.")
    public static let messageNotApproved = Self(4_030_017, "MessageNotApprovedError", "An error that indicates the message isn't in the approved state, so you can't configure it as a default message.")
    public static let imageNotApproved = Self(4_030_018, "ImageNotApprovedError", "An error that indicates the image isn't in the approved state, so you can't configure it as part of a default message.")
    public static let imageInUse = Self(4_030_019, "ImageInUseError", "An error that indicates the image is currently in use as part of a message, so you can't delete it.")
    public static let forbiddenNoPassingTest = Self(4_030_026, "ForbiddenNoPassingTestError", "An error that indicates that passing a performance test is required before you can set a URL for the production environment.")

    // MARK: 404 Not Found
    public static let accountNotFound = Self(4_040_001, "AccountNotFoundError", "An error that indicates the App Store account wasn't found.")
    public static let accountNotFoundRetryable = Self(4_040_002, "AccountNotFoundRetryableError", "An error response that indicates the App Store account wasn't found, but you can try again.", retryable: true)
    public static let appNotFound = Self(4_040_003, "AppNotFoundError", "An error that indicates the app wasn't found.")
    public static let appNotFoundRetryable = Self(4_040_004, "AppNotFoundRetryableError", "An error response that indicates the app wasn't found, but you can try again.", retryable: true)
    public static let originalTransactionIdNotFound = Self(4_040_005, "OriginalTransactionIdNotFoundError", "An error that indicates an original transaction identifier wasn't found.")
    public static let originalTransactionIdNotFoundRetryable = Self(4_040_006, "OriginalTransactionIdNotFoundRetryableError", "An error response that indicates the original transaction identifier wasn't found, but you can try again.", retryable: true)
    public static let serverNotificationUrlNotFound = Self(4_040_007, "ServerNotificationUrlNotFoundError", "An error that indicates that the App Store server couldn't find a notifications URL for your app in this environment.")
    public static let testNotificationNotFound = Self(4_040_008, "TestNotificationNotFoundError", "An error that indicates that the test notification token is expired or the test notification status isn't available.")
    public static let statusRequestNotFound = Self(4_040_009, "StatusRequestNotFoundError", "An error that indicates the server didn't find a subscription-renewal-date extension request for the request identifier and product identifier you provided.")
    public static let transactionIdNotFound = Self(4_040_010, "TransactionIdNotFoundError", "An error that indicates a transaction identifier wasn't found.")
    public static let imageNotFound = Self(4_040_014, "ImageNotFoundError", "An error that indicates the system can't find the image identifier.")
    public static let messageNotFound = Self(4_040_015, "MessageNotFoundError", "An error that indicates the system can't find the message identifier.")
    public static let performanceTestRunNotFound = Self(4_040_018, "PerformanceTestRunNotFoundError", "An error the API returns if the service can't find the specified test run.")
    public static let appTransactionDoesNotExist = Self(4_040_019, "AppTransactionDoesNotExistError", "An error response that indicates an app transaction doesn't exist for the specified customer.")
    public static let defaultMessageNotFound = Self(4_040_020, "DefaultMessageNotFoundError", "An error that indicates a default message isn't configured.")
    public static let realtimeUrlNotFound = Self(4_040_021, "RealtimeUrlNotFoundError", "An error that indicates that the URL for your endpoint isn't configured.")

    // MARK: 409 Conflict
    public static let imageAlreadyExists = Self(4_090_000, "ImageAlreadyExistsError", "An error that indicates the image identifier already exists.")
    public static let messageAlreadyExists = Self(4_090_001, "MessageAlreadyExistsError", "An error that indicates the message identifier already exists.")

    // MARK: 429 Too Many Requests
    public static let rateLimitExceeded = Self(4_290_000, "RateLimitExceededError", "An error that indicates that the request exceeded the rate limit.", retryable: true)

    // MARK: 500 Internal Server Error
    public static let generalInternal = Self(5_000_000, "GeneralInternalError", "An error that indicates a general internal error.")
    public static let generalInternalRetryable = Self(5_000_001, "GeneralInternalRetryableError", "An error response that indicates an unknown error occurred, but you can try again.")

    /// Every code this version of swift-iap knows, in Apple's documented order.
    public static let allKnown: [APIErrorCode] = [
        .generalBadRequest, .invalidAppIdentifier, .invalidRequestRevision, .invalidTransactionId,
        .invalidOriginalTransactionId, .invalidExtendByDays, .invalidExtendReasonCode, .invalidRequestIdentifier,
        .startDateTooFarInPast, .startDateAfterEndDate, .invalidPaginationToken, .invalidStartDate, .invalidEndDate,
        .paginationTokenExpired, .invalidNotificationType, .multipleFiltersSupplied, .invalidTestNotificationToken,
        .invalidSort, .invalidProductType, .invalidProductId, .invalidSubscriptionGroupIdentifier,
        .invalidExcludeRevoked, .invalidInAppOwnershipType, .invalidEmptyStorefrontCountryCodeList,
        .invalidStorefrontCountryCode, .invalidRevoked, .invalidStatus, .invalidAccountTenure, .invalidAppAccountToken,
        .invalidConsumptionStatus, .invalidCustomerConsented, .invalidDeliveryStatus, .invalidLifetimeDollarsPurchased,
        .invalidLifetimeDollarsRefunded, .invalidPlatform, .invalidPlayTime, .invalidSampleContentProvided,
        .invalidUserStatus, .invalidTransactionNotConsumable, .invalidTransactionTypeNotSupported,
        .appTransactionIdNotSupported, .invalidImage, .headerTooLong, .bodyTooLong, .invalidLocale, .altTextTooLong,
        .invalidAppAccountTokenUUID, .familyTransactionNotSupported, .transactionIdNotOriginalTransactionId,
        .invalidPerformanceTestRequest, .invalidRequestId, .existingPerformanceTestRun, .badRequestRealtimeUrl,
        .badRequestImageSize, .badRequestTooManyBulletPoints, .badRequestBulletPointTextTooLong,
        .badRequestAboveImageRequiresAnImage, .subscriptionExtensionIneligible, .subscriptionMaxExtension,
        .familySharedSubscriptionExtensionIneligible, .maximumNumberOfImagesReached, .maximumNumberOfMessagesReached,
        .messageNotApproved, .imageNotApproved, .imageInUse, .forbiddenNoPassingTest, .accountNotFound,
        .accountNotFoundRetryable, .appNotFound, .appNotFoundRetryable, .originalTransactionIdNotFound,
        .originalTransactionIdNotFoundRetryable, .serverNotificationUrlNotFound, .testNotificationNotFound,
        .statusRequestNotFound, .transactionIdNotFound, .imageNotFound, .messageNotFound, .performanceTestRunNotFound,
        .appTransactionDoesNotExist, .defaultMessageNotFound, .realtimeUrlNotFound, .imageAlreadyExists,
        .messageAlreadyExists, .rateLimitExceeded, .generalInternal, .generalInternalRetryable,
    ]
}
