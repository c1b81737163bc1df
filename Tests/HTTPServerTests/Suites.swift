import Testing

/// Every HTTPServer test, run one at a time: the socket tests share two
/// cores with wrk and thousands of clients, and must not time each other out.
@Suite(.serialized) struct HTTPServerTests {}
