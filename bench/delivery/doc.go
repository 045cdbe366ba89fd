// Command delivery measures Herald's delivery pipeline against a bare go-mail
// loop: the same e-mails, from outbox rows through JetStream and the worker
// to a local SMTP server, and straight from go-mail to that server, with the
// same number of connections, in one run. A third side, the floor, is the
// lean loop with the least bookkeeping that keeps every mail and sends none
// twice, done with Herald's parts and batched as far as it goes: what the
// guarantees cost, apart from how Herald pays for them. Run it with `go run
// ./bench/delivery` or `go test -bench . ./bench/delivery`.
package main
