// The catalog of what the business sells (ProductCatalog.md).
import Foundation
import IAPCore

let catalog: StaticProductCatalog = assumed()
