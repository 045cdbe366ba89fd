// Package channeltest holds the conformance suite every channels.Sender passes and real
// protocol peers to run it against: an SMTP server, a Twilio Messages API and a Chatter
// OAuth and feed API, all in process on the loopback interface and scriptable to fail.
package channeltest
