// Command delivery measures Herald's delivery pipeline against a bare go-mail
// loop: the same e-mails, from outbox rows through JetStream and the worker
// to a local SMTP server, and straight from go-mail to that server, with the
// same number of connections, in one run. Run it with `go run
// ./bench/delivery` or `go test -bench . ./bench/delivery`.
package main
