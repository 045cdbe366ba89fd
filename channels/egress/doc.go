// Package egress guards the requests of kinds that post to a URL a channel names (a webhook,
// a Teams workflow): which addresses such a URL may reach, and a transport that dials only
// those.
//
// Endpoints that are not reachable on the internet at large are refused: every address of a
// range of IANA's IPv4 and IPv6 Special-Purpose Address Registries that is not globally
// reachable, the IPv4-mapped, IPv4-compatible and IPv4-translated forms, NAT64, 6to4 and
// Teredo addresses judged by the IPv4 addresses they carry, local-use NAT64, and the addresses
// of this host's own interfaces (read at start and again once a minute old), unless they lie in
// an allowed network; plain http is sent only to addresses in those networks. A host that is a
// number (127.1, 2130706433) or under localhost is refused as well. CheckURL checks a URL when
// it is saved, a literal address included; the Transport resolves a host name when it
// connects, checks every address it resolves to and dials only those addresses, so that a name
// cannot be checked at one address and reached at another. No proxy is used.
//
// Post sends such a request without following redirects, and Answer reads what the receiver
// said: whether to try again (and when, by Retry-After), and an excerpt for the log with the
// URL's secrets redacted.
package egress
