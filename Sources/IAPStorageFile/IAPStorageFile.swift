/// The namespace of the file-based JSON entitlement store.
public enum IAPStorageFile {}
