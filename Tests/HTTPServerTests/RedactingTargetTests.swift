@testable import HTTPServer
import Testing

extension HTTPServerTests {
    /// The target rewriting behind log redaction, without a socket.
    @Suite struct RedactingTarget {
        @Test(arguments: [
            ("/a?access_token=s&x=1", "/a?access_token=REDACTED&x=1"),
            ("/a?x=1&Access_Token=s", "/a?x=1&Access_Token=REDACTED"),
            ("/a?access%5Ftoken=s", "/a?access%5Ftoken=REDACTED"),
            ("/a?access_token", "/a?access_token=REDACTED"),
            ("/a?access_tokens=s#f", "/a?access_tokens=s#f"),
            ("/a?access_token=s#frag", "/a?access_token=REDACTED#frag"),
            ("/a/access_token=s", "/a/access_token=s"),
            // Malformed names that still carry the key.
            ("/a?access_token%3Ds&x=1", "/a?access_token(malformed)=REDACTED&x=1"),
            ("/a?access_token[]=s", "/a?access_token(malformed)=REDACTED"),
            ("/a?access_token%5B%5D=s", "/a?access_token(malformed)=REDACTED"),
            ("/a?ACCESS_TOKEN%3D%3Ds", "/a?access_token(malformed)=REDACTED"),
            ("/a?access_token.x=s", "/a?access_token(malformed)=REDACTED"),
            ("/a?access_token_2=s", "/a?access_token_2=s"),
        ])
        func redacts(target: String, logged: String) {
            #expect(RequestTarget.redacting(target, parameters: ["access_token"]) == logged)
        }
    }
}
