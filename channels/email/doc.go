// Package email delivers channel messages as e-mail: Sender hands them to an SMTP relay,
// Outbox writes the same RFC 5322 messages as .eml files when no relay is configured. The
// Message-ID derives from the delivery id, so a re-send carries the same one.
//
// go-mail composes the messages' header and body, dials the relay and speaks the
// session. A message's files are this package's (attachments.go): it wraps go-mail's
// body in a multipart/related with the HTML's inline images after it, and that in a
// multipart/mixed with the attached files, each file's base64 kept once for all the
// mails of a burst that show or attach it. The mail transaction is this
// package's too (transaction.go, chunks.go): MAIL, RCPT and the message and nothing
// more. Where the relay offers CHUNKING and PIPELINING the message goes as BDAT chunks
// in the same write as MAIL and RCPT; otherwise after DATA, the three in one write
// where the relay offers PIPELINING, the data dot-stuffed a run of lines at a time
// rather than a byte at a time.
package email
