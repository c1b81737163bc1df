import DBus
import Glibc

// bench-responder --bus ADDRESS [--no-read-signal] [--no-acquire-notify]
//
// Serves org.bluez (see Responder) on the bus, prints `ready NAME` once it
// owns the name, then reads commands on standard input, one per line:
//
//   emit RATE COUNT   send COUNT notifications at RATE/s; prints `done SENT NANOSECONDS`
//   quit              (or end of input) leaves
//
// The commands are read on the main thread, which is not one of Swift's
// cooperative threads: blocking it in readLine or in the emitter's sleeps
// delays none of the D-Bus work, which runs on the connection's own thread
// and in tasks.

func fail(_ message: String) -> Never {
    var text = "bench-responder: \(message)\n"
    text.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
    exit(64)
}

var arguments = CommandLine.arguments.dropFirst()
var address: String?
var readSignal = true
var acquireNotify = true
while let argument = arguments.popFirst() {
    switch argument {
    case "--bus": address = arguments.popFirst()
    case "--no-read-signal": readSignal = false
    case "--no-acquire-notify": acquireNotify = false
    default: fail("unknown argument \(argument)")
    }
}
guard let address else { fail("--bus ADDRESS is required") }

let bus: Connection
do {
    bus = try await Connection.connect(to: .address(address))
    let responder = Responder(bus: bus, readSignal: readSignal, acquireNotify: acquireNotify)
    try await responder.start()
    print("ready \(bus.uniqueName)")
    fflush(nil)
    while let line = readLine() {
        let words = line.split(separator: " ")
        guard let command = words.first else { continue }
        switch command {
        case "emit":
            guard words.count == 3, let rate = Double(words[1]), rate > 0, let count = Int(words[2]), count > 0 else {
                print("error usage: emit RATE COUNT")
                fflush(nil)
                continue
            }
            let (sent, nanoseconds) = responder.emit(rate: rate, count: count)
            // On standard error (the harness keeps it in responder.log):
            // what an acquired socket dropped, as bluetoothd would have.
            let dropped = responder.notifySocket.dropped.exchange(0, ordering: .relaxed)
            if dropped > 0 {
                var text = "bench-responder: the AcquireNotify socket was full for \(dropped) of \(sent) values\n"
                text.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
            }
            print("done \(sent) \(nanoseconds)")
        case "quit":
            bus.close()
            exit(0)
        default:
            print("error unknown command \(command)")
        }
        fflush(nil)
    }
    bus.close()
} catch {
    fail("\(error)")
}
