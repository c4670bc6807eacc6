import IAPCore
import IAPHTTPServer

extension HTTPServerResponse {
    /// The answer of the simulated App Store's in-process API, sent as it is; a JSON body keeps its `Content-Type`.
    init(_ response: HTTPResponse) {
        var headers = HTTPHeaders()
        for (name, value) in response.headers.sorted(by: { $0.key < $1.key }) {
            headers.add(name: name == "content-type" ? "Content-Type" : name, value: value)
        }
        self.init(status: response.status, headers: headers, body: response.body)
    }
}
