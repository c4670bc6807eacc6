// What a server's route has at hand: the app's signed transaction, its user and order, a request body.
import Foundation

let jws: String = assumed()
let jwsFromTheApp: String = assumed()
let userId: String = assumed()
let orderId: String? = assumed()
let body: Data = assumed()
