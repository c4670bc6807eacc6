// The operator's tools (Operations.md): something that pages a person, and the support ticket being worked on.
protocol Pager: Sendable {
    func page(_ message: String) async
}

struct Ticket {
    var uuid: String
}

let pager: any Pager = assumed()
let ticket: Ticket = assumed()
