// The integrator's fulfillment hook: what grants and takes back (Delivery.md).
import IAPCore

let wallet: any FulfillmentHook = assumed()
