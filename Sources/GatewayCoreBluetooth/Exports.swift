// Core Bluetooth brings Foundation (NSObject, Data, NSNumber,
// DispatchQueue) with it: code that imports only CoreBluetooth must
// compile here with only this import changed.
@_exported import Dispatch
@_exported import Foundation
