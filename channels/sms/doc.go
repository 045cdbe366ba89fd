// Package sms delivers channel messages as text messages through Twilio's Messages API (or a
// compatible provider), using the channel's account SID and auth token. It also does the SMS
// segment arithmetic that keeps a message within a set number of segments.
package sms
