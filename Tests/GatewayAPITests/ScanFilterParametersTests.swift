import BlueZ
import HTTPServer
import Testing

@testable import GatewayAPI

/// `GET /v1/scan`'s query and `POST /v1/scan`'s body take the same filters,
/// with the same spellings and the same 400s.
@Suite struct ScanFilterParametersTests {
    func fromQuery(_ query: String) throws(Problem) -> DiscoveryFilter {
        try ScanFilterParameters(query: Request(method: .get, target: "/v1/scan?" + query))
            .filter(defaultPresenceTimeout: nil)
    }

    func fromBody(_ json: String) throws(Problem) -> DiscoveryFilter {
        let request = Request(
            method: .post, target: "/v1/scan", headers: ["Content-Type": "application/json"], body: Array(json.utf8))
        let body = try JSONBody(request, allowed: ScanFilterParameters.names)
        return try ScanFilterParameters(body: body).filter(defaultPresenceTimeout: nil)
    }

    /// The parameter a 400 names, or nil if there was none.
    func refusedParameter(_ parse: () throws(Problem) -> DiscoveryFilter) -> String? {
        do {
            _ = try parse()
            return nil
        } catch {
            #expect(error.status == .badRequest)
            return error.invalidParameters?.first?.name
        }
    }

    @Test func everyFieldReadsTheSameFromQueryAndBody() throws {
        let query = try fromQuery(
            "service=180d,180f&name=Polar%20H10&name_prefix=Pol&rssi=-70&manufacturer=0x004c&duplicates=true"
                + "&address=c4-7c-8d-6a-1b-01&address_prefix=c4:7c&service_data=fcd2&min_interval_ms=500"
                + "&presence_timeout_ms=3000&rssi_smoothing=0.5")
        let body = try fromBody(
            #"{"services":["180d","180f"],"name":"Polar H10","name_prefix":"Pol","rssi":-70,"manufacturer":"0x004c","#
                + #""duplicates":true,"address":"c4-7c-8d-6a-1b-01","address_prefix":"c4:7c","service_data":["fcd2"],"#
                + #""min_interval_ms":500,"presence_timeout_ms":3000,"rssi_smoothing":0.5}"#)
        #expect(query == body)
        #expect(query.serviceUUIDs == [try BluetoothUUID(parsing: "180d"), try BluetoothUUID(parsing: "180f")])
        #expect(query.name == "Polar H10")
        #expect(query.namePrefix == "Pol")
        #expect(query.minimumRSSI == -70)
        #expect(query.manufacturerID == 0x004C)
        #expect(query.allowDuplicates)
        #expect(query.address == BluetoothAddress("C4:7C:8D:6A:1B:01"))
        #expect(query.addressPrefix == "C47C")
        #expect(query.serviceDataUUIDs == [try BluetoothUUID(parsing: "fcd2")])
        #expect(query.minimumUpdateInterval == .milliseconds(500))
        #expect(query.presenceTimeout == .milliseconds(3000))
        #expect(query.rssiSmoothing == 0.5)
    }

    @Test(arguments: ["76", "0x004c", "0X004C"])
    func aManufacturerIsDecimalOrHexInBoth(_ text: String) throws {
        #expect(try fromQuery("manufacturer=\(text)").manufacturerID == 76)
        #expect(try fromBody(#"{"manufacturer":"\#(text)"}"#).manufacturerID == 76)
    }

    @Test func aManufacturerMayBeANumberInTheBody() throws {
        #expect(try fromBody(#"{"manufacturer":76}"#).manufacturerID == 76)
    }

    @Test func duplicatesAreOffUnlessAsked() throws {
        #expect(try fromQuery("").allowDuplicates == false)
        #expect(try fromBody("{}").allowDuplicates == false)
        #expect(try fromQuery("duplicates=false").allowDuplicates == false)
        #expect(try fromBody(#"{"duplicates":false}"#).allowDuplicates == false)
    }

    @Test(arguments: [
        ("manufacturer=65536", #"{"manufacturer":65536}"#, "manufacturer"),
        ("manufacturer=0x", #"{"manufacturer":"0x"}"#, "manufacturer"),
        ("manufacturer=apple", #"{"manufacturer":true}"#, "manufacturer"),
        ("duplicates=maybe", #"{"duplicates":"maybe"}"#, "duplicates"),
        ("rssi=-128", #"{"rssi":-128}"#, "rssi"),
        ("rssi=21", #"{"rssi":21}"#, "rssi"),
        ("service=180x", #"{"services":["180x"]}"#, "services"),
        ("name_prefix=" + String(repeating: "a", count: 249), #"{"name_prefix":"\#(String(repeating: "a", count: 249))"}"#, "name_prefix"),
        ("address=C4:7C", #"{"address":"C4:7C"}"#, "address"),
        ("address_prefix=zz", #"{"address_prefix":"zz"}"#, "address_prefix"),
        ("service_data=nope", #"{"service_data":["nope"]}"#, "service_data"),
        ("min_interval_ms=-1", #"{"min_interval_ms":-1}"#, "min_interval_ms"),
        ("presence_timeout_ms=99", #"{"presence_timeout_ms":99}"#, "presence_timeout_ms"),
        ("rssi_smoothing=0", #"{"rssi_smoothing":0}"#, "rssi_smoothing"),
    ])
    func aMistakeIsTheSame400InBoth(query: String, body: String, parameter: String) {
        // The query names its service list `service`; the body `services`.
        let queryParameter = parameter == "services" ? "service" : parameter
        #expect(refusedParameter { () throws(Problem) in try fromQuery(query) } == queryParameter)
        #expect(refusedParameter { () throws(Problem) in try fromBody(body) } == parameter)
    }
}
