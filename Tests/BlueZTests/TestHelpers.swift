@testable import BlueZ

/// An address from a literal in a test.
func address(_ text: String) throws -> BluetoothAddress {
    try BluetoothAddress(parsing: text)
}
