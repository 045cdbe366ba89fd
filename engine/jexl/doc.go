// Package jexl compiles the condition and message-template language of subscriptions, a small
// subset of Apache JEXL built around f:executeMetric('<metric uri>'), into expr-lang programs.
// Programs read metric values from a plain map supplied by the caller and can call nothing but
// a short list of pure numeric functions.
package jexl
