// includes: server, ledger
// The delivery pipeline over the server's pieces (Delivery.md).
import IAPCore

let pipeline: DeliveryPipeline = assumed()
