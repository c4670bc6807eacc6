import IAPCore

extension Arguments {
    /// A user id given with `--NAME`, checked as the server checks one (`DeliveryPipeline.validate(userId:)`): not
    /// empty, not blanks only, no control, format or separator character, not in the pipeline's own namespace.
    ///
    /// - Parameter name: The option, without its dashes (`user`).
    /// - Returns: The id as given, or `nil` when the option is absent.
    /// - Throws: A usage error naming the option and the rule.
    public func userId(_ name: String) throws(UsageError) -> String? {
        guard let user = try value(name) else {
            return nil
        }
        do {
            try DeliveryPipeline.validate(userId: user)
        } catch {
            throw UsageError(message: "--\(name): \((error as? IAPError)?.message ?? "\(error)")")
        }
        return user
    }
}
