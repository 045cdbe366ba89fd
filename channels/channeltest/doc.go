// Package channeltest holds the conformance suite every channels.Sender passes and real
// protocol peers to run it against: an SMTP server, a Twilio Messages API, a Chatter OAuth
// and feed API, a Teams workflow trigger that checks its Adaptive Cards and a Google Chat
// space's incoming webhook, all in process on the loopback interface and scriptable to fail.
package channeltest
