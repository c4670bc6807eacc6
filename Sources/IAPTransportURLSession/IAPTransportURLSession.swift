/// The namespace of the `URLSession` transport.
public enum IAPTransportURLSession {}
