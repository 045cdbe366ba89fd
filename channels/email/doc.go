// Package email delivers channel messages as e-mail: Sender hands them to an SMTP relay
// through go-mail, Outbox writes the same RFC 5322 messages as .eml files when no relay is
// configured. The Message-ID derives from the delivery id, so a re-send carries the same one.
package email
